"""Hidden checks for ch3_multihead (3장 실습 3, Multi-Head 로 나누고 합치기).

`CHECKS` at the end declares one `HiddenCheck` per hidden test cell; the
cell calls the derived `check_<grade_id>(function)`. Random cases use
all-different axis lengths, so a swapped axis cannot hide behind equal sizes;
every case carries its seed, and `python -m coursekit.checks.reproduce
ch3_multihead SEED` rebuilds it for a TA.
"""

from __future__ import annotations

import copy
from dataclasses import replace

import numpy as np

from coursekit.checks.core import (
    READS_NOTEBOOK_GLOBALS,
    Case,
    Evidence,
    Misconception,
    distinct_ints,
    quiet_numpy,
    same,
    uses_attribute,
)
from coursekit.checks.declared import HiddenCheck, HiddenChecks
from solutions import ch3_multihead as ref

ASSIGNMENT = "ch3_multihead"
# Names the seed's setup cells define at top level. A learner function that
# reads one of them instead of its own arguments only works on the seed.
NOTEBOOK_GLOBALS = frozenset(
    {"n", "h", "d_model", "d_head", "d_k", "words", "X", "Q", "K", "V", "Qh", "Kh", "Vh"}
)
# The functions multi_head_attention calls; the reference's stand in for the learner's.
MHA_HELPERS = ("softmax", "split_heads", "scaled_dot_product_attention", "merge_heads")
# The seed's n, d_model and h, which a learner may read as globals or write in as numbers.
SEED_N, SEED_D_MODEL, SEED_H = 4, 8, 2


def _right_only_at_the_seed(reference, *seed_args):
    """Detect code that fails here yet is right on arguments of the seed's shapes.

    That is the seed's n, h or d_head written in as numbers. Code that reads
    the notebook's globals instead is left to READS_NOTEBOOK_GLOBALS.
    """

    def detect(ev: Evidence) -> bool:
        if ev.globals_read():
            return False
        with quiet_numpy():
            got = ev.fn(*copy.deepcopy(seed_args))
        return same(got, reference(*seed_args))

    return detect


def _hard_coded_seed_shape(shapes_from_arguments: str, reference, *seed_args) -> Misconception:
    return Misconception(
        "hard_coded_seed_shape",
        f"씨앗 예제의 모양(n = {SEED_N}, d_model = {SEED_D_MODEL}, h = {SEED_H})에서만 맞습니다. 모양을 숫자로 적어 넣지 않았나요?",
        f"모양은 인자에서 꺼내 쓰세요: {shapes_from_arguments}.",
        detect=_right_only_at_the_seed(reference, *seed_args),
    )


# ---------------------------------------------------------------- softmax


def softmax_case(seed: int, *, large: bool = False) -> Case:
    rng = np.random.default_rng(seed)
    ndim = 1 + seed % 3
    shape = tuple(distinct_ints(rng, ndim, 2, 7))
    if large:
        x = rng.uniform(-1e4, 1e4, size=shape)
        x[..., 0] = 1e4  # a row whose largest entry overflows exp() without the max shift
        label = "±1e4 까지 큰 값"
    else:
        x = rng.normal(scale=3.0, size=shape)
        label = "무작위 모양"
    return Case(label, (x,), ("x",), seed)


SOFTMAX_RANDOM_CASES = [softmax_case(seed) for seed in range(3000, 3012)]
SOFTMAX_LARGE_CASES = [softmax_case(seed, large=True) for seed in range(3100, 3106)]


def _sums_to_one_over_other_axis(ev: Evidence) -> bool:
    got = ev.got
    if not isinstance(got, np.ndarray) or got.ndim < 2 or not np.all(np.isfinite(got)):
        return False
    last_ok = np.allclose(got.sum(axis=-1), 1.0)
    return not last_ok and any(np.allclose(got.sum(axis=a), 1.0) for a in range(got.ndim - 1))


def _sums_to_one_overall(ev: Evidence) -> bool:
    got = ev.got
    return (
        isinstance(got, np.ndarray)
        and got.ndim >= 2
        and bool(np.isclose(np.sum(got), 1.0))
        and not np.allclose(got.sum(axis=-1), 1.0)
    )


def _overflowed(ev: Evidence) -> bool:
    (x,) = ev.case.args
    got = ev.got
    return (
        np.abs(x).max() > 700
        and isinstance(got, np.ndarray)
        and got.shape == x.shape
        and not np.all(np.isfinite(got))
    )


SOFTMAX_MISTAKES = (
    Misconception(
        "softmax_wrong_axis",
        "softmax 를 마지막 축이 아닌 다른 축(axis=0 또는 axis=1)으로 계산했습니다",
        "행마다 합이 1 이 되도록 axis=-1, keepdims=True 를 쓰세요. 3차원 입력에서도 마지막 축입니다.",
        detect=_sums_to_one_over_other_axis,
    ),
    Misconception(
        "softmax_whole_array",
        "배열 전체의 합으로 나눠, 행마다가 아니라 전체 합이 1 이 되었습니다",
        "e.sum() 대신 e.sum(axis=-1, keepdims=True) 로 나누세요.",
        detect=_sums_to_one_overall,
    ),
    Misconception(
        "softmax_no_max_shift",
        "exp 전에 최댓값을 빼지 않아 큰 값(1e4)에서 exp 가 넘쳐 nan/inf 가 되었습니다",
        "x - x.max(axis=-1, keepdims=True) 를 먼저 계산한 뒤 exp 를 하세요. 결과는 같고 넘치지 않습니다.",
        detect=_overflowed,
    ),
    Misconception(
        "softmax_missing_keepdims",
        "합을 구할 때 keepdims 를 빠뜨려 나눗셈의 축이 어긋났습니다",
        "e.sum(axis=-1, keepdims=True) 처럼 keepdims=True 로 축을 남겨 두세요.",
        detect=lambda ev: isinstance(ev.error, ValueError) and "broadcast" in str(ev.error),
    ),
)


# ---------------------------------------------------------------- split_heads


def split_heads_case(seed: int, *, h: int | None = None, d_model: int | None = None) -> Case:
    """Random (n, d_model, h) with all-different lengths, or the given edge h and d_model."""
    rng = np.random.default_rng(seed)
    label = "무작위 모양" if h is None else f"경계 사례 h={h}, d_model={d_model}"
    if h is None:
        h, d_head = distinct_ints(rng, 2, 2, 6)
        d_model = h * d_head
    n = next(v for v in distinct_ints(rng, 5, 2, 9) if v not in (h, d_model, d_model // h))
    return Case(label, (rng.normal(size=(n, d_model)), h), ("M", "h"), seed)


SPLIT_HEADS_RANDOM_CASES = [split_heads_case(seed) for seed in range(3200, 3212)]
SPLIT_HEADS_EDGE_CASES = [
    split_heads_case(3250, h=1, d_model=6),
    split_heads_case(3251, h=5, d_model=5),
    split_heads_case(3252, h=7, d_model=7),
]


SPLIT_HEADS_MISTAKES = (
    Misconception(
        "reshape_without_transpose",
        "transpose 없이 reshape(h, n, d_head) 만 해서 낱말과 head 가 뒤섞였습니다",
        "M.reshape(n, h, d_head) 로 칸을 자른 뒤 .transpose(1, 0, 2) 로 head 축을 맨 앞으로 보내세요.",
        predict=lambda M, h: M.reshape(h, M.shape[0], M.shape[1] // h),
    ),
    Misconception(
        "interleaved_head_columns",
        "head 에 칸을 번갈아(0, h, 2h, …) 나눠 주었습니다. head i 는 이어진 칸 i*d_head:(i+1)*d_head 를 맡아야 합니다",
        "reshape(n, d_head, h) 가 아니라 reshape(n, h, d_head) 로 자르세요.",
        predict=lambda M, h: M.reshape(M.shape[0], M.shape[1] // h, h).transpose(2, 0, 1),
    ),
    Misconception(
        "split_wrong_axis_order",
        "축 순서가 (h, n, d_head) 가 아닙니다",
        "reshape(n, h, d_head) 다음 transpose(1, 0, 2): head, 낱말, 칸 순서입니다.",
        predict=lambda M, h: M.reshape(M.shape[0], h, M.shape[1] // h).transpose(1, 2, 0),
    ),
    _hard_coded_seed_shape(
        "n, d_model = M.shape, d_head = d_model // h",
        ref.split_heads,
        np.random.default_rng(1).normal(size=(SEED_N, SEED_D_MODEL)),
        SEED_H,
    ),
)


# ---------------------------------------------------------------- attention


def attention_case(seed: int, *, leading: tuple[int, ...] | None = None) -> Case:
    """Random shapes with one head axis, or the given leading axes (an edge case)."""
    rng = np.random.default_rng(seed)
    n_q, n_k, d_k, d_v, heads = distinct_ints(rng, 5, 2, 9)
    label = "무작위 모양" if leading is None else f"경계 사례 앞 축 {leading}"
    if leading is None:
        leading = (heads,)
    Q = rng.normal(size=(*leading, n_q, d_k))
    K = rng.normal(size=(*leading, n_k, d_k))
    V = rng.normal(size=(*leading, n_k, d_v))
    return Case(label, (Q, K, V), ("Q", "K", "V"), seed)


ATTENTION_RANDOM_CASES = [attention_case(seed) for seed in range(3300, 3312)]
ATTENTION_EDGE_CASES = [
    attention_case(3350, leading=()),
    attention_case(3351, leading=()),
    attention_case(3352, leading=(2, 3)),
    attention_case(3353, leading=(1,)),
]


def _implied_scale(ev: Evidence) -> float | None:
    """The divisor c such that the returned weights equal softmax(QKᵀ / c), if one fits."""
    got = ev.got
    if not isinstance(got, tuple | list) or len(got) != 2:
        return None
    Q, K, _ = ev.case.args
    weights = np.asarray(got[1], dtype=float)
    raw = Q @ np.swapaxes(K, -1, -2)
    if weights.shape != raw.shape or raw.shape[-1] < 2 or np.any(weights <= 0):
        return None
    log_w = np.log(weights)
    a = raw - raw.mean(axis=-1, keepdims=True)
    b = log_w - log_w.mean(axis=-1, keepdims=True)
    if not np.any(b):
        return None
    scale = float(np.sum(a * a) / np.sum(a * b))
    if scale <= 0 or not np.allclose(a / scale, b, rtol=1e-5, atol=1e-6):
        return None
    return scale


def _scaled_by(*candidates):
    def detect(ev: Evidence) -> bool:
        scale = _implied_scale(ev)
        if scale is None:
            return False
        Q = ev.case.args[0]
        d_k = Q.shape[-1]
        heads = int(np.prod(Q.shape[:-2])) if Q.ndim > 2 else 1
        values = [c(d_k, heads) for c in candidates]
        return any(np.isclose(scale, v, rtol=1e-4) for v in values) and not np.isclose(
            scale, np.sqrt(d_k), rtol=1e-4
        )

    return detect


def _swapped_outputs(Q, K, V):
    output, weights = ref.scaled_dot_product_attention(Q, K, V)
    return weights, output


def _weights_times_k(Q, K, V):
    _, weights = ref.scaled_dot_product_attention(Q, K, V)
    return weights @ K, weights


def _weights_over_columns(ev: Evidence) -> bool:
    got = ev.got
    if not isinstance(got, tuple | list) or len(got) != 2:
        return False
    weights = np.asarray(got[1], dtype=float)
    return (
        weights.ndim >= 2
        and weights.shape[-1] != weights.shape[-2]
        and np.all(np.isfinite(weights))
        and np.allclose(weights.sum(axis=-2), 1.0)
        and not np.allclose(weights.sum(axis=-1), 1.0)
    )


ATTENTION_MISTAKES = (
    Misconception(
        "no_scaling",
        "점수를 √d_k 로 나누지 않았습니다",
        "scores = Q @ K^T / np.sqrt(d_k), d_k = Q.shape[-1] 입니다 (씨앗 예제에서는 √4 = 2).",
        detect=_scaled_by(lambda d_k, heads: 1.0),
    ),
    Misconception(
        "scaled_by_d_k",
        "√d_k 가 아니라 d_k 로 나눴습니다",
        "제곱근을 씌우세요: np.sqrt(Q.shape[-1]).",
        detect=_scaled_by(lambda d_k, heads: float(d_k)),
    ),
    Misconception(
        "scaled_by_sqrt_d_model",
        "head 하나의 폭 d_k 가 아니라 전체 폭 d_model 의 제곱근으로 나눴습니다",
        "head 마다 √d_head 로 나눕니다: np.sqrt(Q.shape[-1]). 전역 d_model 을 쓰지 마세요.",
        detect=_scaled_by(
            lambda d_k, heads: np.sqrt(SEED_D_MODEL), lambda d_k, heads: np.sqrt(d_k * heads)
        ),
    ),
    Misconception(
        "k_transpose_on_stacked_heads",
        "쌓인 head 에 K.T 를 써서 모든 축이 뒤집혔습니다 (2차원에서만 맞습니다)",
        "마지막 두 축만 바꾸세요: K.transpose(0, 2, 1) 또는 np.swapaxes(K, -1, -2).",
        detect=lambda ev: (
            ev.case.args[0].ndim > 2
            and uses_attribute(ev.fn, "T")
            and (ev.error is not None or ev.got is not None)
        ),
    ),
    Misconception(
        "weights_times_k",
        "가중치를 V 가 아니라 K 와 곱했습니다",
        "output = weights @ V: 제목표(K)로 비율을 정하고, 섞는 것은 내용(V)입니다.",
        predict=_weights_times_k,
    ),
    Misconception(
        "output_weights_swapped",
        "(weights, output) 순서로 돌려줬습니다",
        "return output, weights 순서를 지키세요.",
        predict=_swapped_outputs,
    ),
    Misconception(
        "attention_softmax_wrong_axis",
        "가중치를 열 방향(axis=-2)으로 정규화했습니다. 질문(행)마다 합이 1 이어야 합니다",
        "softmax 를 마지막 축(axis=-1)으로 계산하세요.",
        detect=_weights_over_columns,
    ),
)


# ---------------------------------------------------------------- merge_heads


def merge_heads_case(seed: int) -> Case:
    rng = np.random.default_rng(seed)
    h, n, d_head = distinct_ints(rng, 3, 2, 7)
    return Case("무작위 모양", (rng.normal(size=(h, n, d_head)),), ("heads_out",), seed)


MERGE_HEADS_RANDOM_CASES = [merge_heads_case(seed) for seed in range(3400, 3412)]


MERGE_HEADS_MISTAKES = (
    Misconception(
        "merge_without_transpose",
        "transpose 없이 reshape(n, h * d_head) 만 해서 head 결과가 낱말 사이에 섞였습니다",
        "heads_out.transpose(1, 0, 2) 로 낱말 축을 앞으로 보낸 뒤 reshape(n, h * d_head) 하세요.",
        predict=lambda H: H.reshape(H.shape[1], H.shape[0] * H.shape[2]),
    ),
    Misconception(
        "merge_interleaved",
        "head 결과를 칸마다 번갈아 붙였습니다. head i 는 이어진 칸 i*d_head:(i+1)*d_head 에 가야 합니다",
        "transpose(1, 0, 2) 를 쓰세요. transpose(1, 2, 0) 은 칸을 번갈아 섞습니다.",
        predict=lambda H: H.transpose(1, 2, 0).reshape(H.shape[1], H.shape[0] * H.shape[2]),
    ),
    Misconception(
        "merge_stacked_rows",
        "head 결과를 옆이 아니라 아래로 쌓았습니다",
        "회의록에 나란히 적듯 옆으로(열 방향) 이어 붙이세요: np.concatenate(list(heads_out), axis=-1).",
        predict=lambda H: H.reshape(H.shape[0] * H.shape[1], H.shape[2]),
    ),
    _hard_coded_seed_shape(
        "h, n, d_head = heads_out.shape",
        ref.merge_heads,
        np.random.default_rng(1).normal(size=(SEED_H, SEED_N, SEED_D_MODEL // SEED_H)),
    ),
    # The generic advice unpacks M.shape; merge_heads' argument is heads_out.
    replace(
        READS_NOTEBOOK_GLOBALS,
        advice="모양은 인자에서 꺼내 쓰세요: h, n, d_head = heads_out.shape.",
    ),
)


# ---------------------------------------------------------------- multi_head_attention


def mha_case(seed: int, *, h: int | None = None, d_model: int | None = None) -> Case:
    """Random (n, d_model, h) with all-different lengths, or the given edge h and d_model."""
    rng = np.random.default_rng(seed)
    label = "무작위 모양" if h is None else f"경계 사례 h={h}, d_model={d_model}"
    if h is None:
        h, d_head = distinct_ints(rng, 2, 2, 5)
        d_model = h * d_head
    n = next(v for v in distinct_ints(rng, 5, 2, 9) if v not in (h, d_model, d_model // h))
    X = rng.normal(size=(n, d_model))
    weights = tuple(rng.normal(size=(d_model, d_model)) * 0.5 for _ in range(4))
    return Case(label, (X, *weights, h), ("X", "W_Q", "W_K", "W_V", "W_O", "h"), seed)


MHA_RANDOM_CASES = [mha_case(seed) for seed in range(3500, 3510)]
MHA_EDGE_CASES = [mha_case(3550, h=1, d_model=6), mha_case(3551, h=6, d_model=6)]


def _mha_pieces(X, W_Q, W_K, W_V, W_O, h):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    split = ref.split_heads
    heads_out, weights = ref.scaled_dot_product_attention(split(Q, h), split(K, h), split(V, h))
    return ref.merge_heads(heads_out), weights


def _forgets_w_o(X, W_Q, W_K, W_V, W_O, h):
    return _mha_pieces(X, W_Q, W_K, W_V, W_O, h)


def _w_o_transposed(X, W_Q, W_K, W_V, W_O, h):
    concat, weights = _mha_pieces(X, W_Q, W_K, W_V, W_O, h)
    return concat @ W_O.T, weights


def _projections_transposed(X, W_Q, W_K, W_V, W_O, h):
    return ref.multi_head_attention(X, W_Q.T, W_K.T, W_V.T, W_O.T, h)


def _single_head(ev: Evidence) -> bool:
    got = ev.got
    if not isinstance(got, tuple | list) or len(got) != 2:
        return False
    X, W_Q, W_K, W_V, W_O, h = ev.case.args
    output, weights = ref.scaled_dot_product_attention(X @ W_Q, X @ W_K, X @ W_V)
    # With h = 1 one head gives the right output; then only the (n, n) weights tell.
    return same(got[0], output @ W_O) and (h > 1 or same(got[1], weights))


MHA_MISTAKES = (
    Misconception(
        "forgets_w_o",
        "이어 붙인 뒤 W_O 를 곱하지 않았습니다 (팀장이 정리하지 않은 회의록)",
        "output = merge_heads(heads_out) @ W_O 로 마지막에 W_O 로 섞으세요.",
        predict=_forgets_w_o,
    ),
    Misconception(
        "w_o_transposed",
        "W_O 를 전치해서(W_O.T) 곱했습니다",
        "concat @ W_O: (n, d_model) @ (d_model, d_model) 순서 그대로 곱하세요.",
        predict=_w_o_transposed,
    ),
    Misconception(
        "projections_transposed",
        "Q, K, V, 출력을 X @ W 가 아니라 전치한 W 로 계산했습니다",
        "Q, K, V = X @ W_Q, X @ W_K, X @ W_V, 출력은 concat @ W_O 입니다.",
        predict=_projections_transposed,
    ),
    Misconception(
        "single_head",
        "head 로 나누지 않고 Attention 을 한 번만(head 1개로) 계산했습니다",
        "split_heads(Q, h) 처럼 h 개로 나눠 head 마다 Attention 을 계산한 뒤 merge_heads 로 합치세요.",
        detect=_single_head,
    ),
)


# ---------------------------------------------------------------- mha_param_count

PARAM_COUNT_CASES = [
    Case("다른 크기", size, ("d_model", "h"))
    for size in ((12, 3), (12, 4), (64, 8), (512, 8), (6, 1), (10, 10))
]

SEED_PARAM_COUNT = ref.mha_param_count(SEED_D_MODEL, SEED_H)

PARAM_COUNT_MISTAKES = (
    Misconception(
        "param_count_divided_by_h",
        "가중치 수를 h 로 나눴습니다. head 로 나눠도 규칙표 크기는 그대로입니다",
        "4 * d_model * d_model: head 수와 상관이 없습니다.",
        predict=lambda d_model, h: 4 * d_model * d_model // h,
    ),
    Misconception(
        "param_count_times_h",
        "가중치 수에 h 를 곱했습니다. head 마다 규칙표를 새로 두는 것이 아닙니다",
        "큰 W_Q 하나를 곱한 뒤 잘라 씁니다: 4 * d_model * d_model.",
        predict=lambda d_model, h: 4 * d_model * d_model * h,
    ),
    Misconception(
        "param_count_without_w_o",
        "W_O 를 빼고 세 장(W_Q, W_K, W_V)만 셌습니다",
        "팀장의 규칙표 W_O 도 (d_model, d_model) 입니다: 네 장을 세세요.",
        predict=lambda d_model, h: 3 * d_model * d_model,
    ),
    Misconception(
        "param_count_hard_coded",
        f"씨앗 예제의 답 {SEED_PARAM_COUNT} 을 그대로 돌려줬습니다",
        "d_model 로 계산하세요: 4 * d_model * d_model.",
        detect=lambda ev: ev.got == SEED_PARAM_COUNT and ev.case.args[0] != SEED_D_MODEL,
    ),
)


# ---------------------------------------------------------------- the hidden cells

CHECKS = HiddenChecks(
    ASSIGNMENT,
    reference=ref,
    notebook_globals=NOTEBOOK_GLOBALS,
    checks=[
        HiddenCheck(
            "softmax_random_shapes",
            "softmax",
            "무작위 모양(1~3차원)",
            SOFTMAX_RANDOM_CASES,
            SOFTMAX_MISTAKES,
        ),
        HiddenCheck(
            "softmax_large_entries",
            "softmax",
            "±1e4 까지 큰 값",
            SOFTMAX_LARGE_CASES,
            SOFTMAX_MISTAKES,
        ),
        HiddenCheck(
            "split_heads_random_shapes",
            "split_heads",
            "무작위 모양",
            SPLIT_HEADS_RANDOM_CASES,
            SPLIT_HEADS_MISTAKES,
        ),
        HiddenCheck(
            "split_heads_edge_cases",
            "split_heads",
            "경계 사례(h = 1, h = d_model)",
            SPLIT_HEADS_EDGE_CASES,
            SPLIT_HEADS_MISTAKES,
        ),
        HiddenCheck(
            "attention_random_shapes",
            "scaled_dot_product_attention",
            "무작위 모양(head 축 포함, n_q ≠ n_k, d_k ≠ d_v)",
            ATTENTION_RANDOM_CASES,
            ATTENTION_MISTAKES,
            helpers=("softmax",),
        ),
        HiddenCheck(
            "attention_edge_cases",
            "scaled_dot_product_attention",
            "경계 사례(2차원 입력, 앞 축 두 개, head 1개)",
            ATTENTION_EDGE_CASES,
            ATTENTION_MISTAKES,
            helpers=("softmax",),
        ),
        HiddenCheck(
            "merge_heads_random_shapes",
            "merge_heads",
            "무작위 모양",
            MERGE_HEADS_RANDOM_CASES,
            MERGE_HEADS_MISTAKES,
        ),
        HiddenCheck(
            "mha_random_shapes",
            "multi_head_attention",
            "무작위 모양",
            MHA_RANDOM_CASES,
            MHA_MISTAKES,
            helpers=MHA_HELPERS,
        ),
        HiddenCheck(
            "mha_edge_cases",
            "multi_head_attention",
            "경계 사례(h = 1, h = d_model)",
            MHA_EDGE_CASES,
            MHA_MISTAKES,
            helpers=MHA_HELPERS,
        ),
        HiddenCheck(
            "param_count_other_sizes",
            "mha_param_count",
            "다른 d_model, h",
            PARAM_COUNT_CASES,
            PARAM_COUNT_MISTAKES,
        ),
    ],
)
# check_<grade_id>(function), which each hidden cell calls.
globals().update(CHECKS.wrappers())
