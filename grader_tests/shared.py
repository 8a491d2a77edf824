"""Cases and misconceptions shared by the course's assignments.

ch3_multihead teaches split_heads, merge_heads and scaled_dot_product_attention;
ch4_cross_attention asks for them again. Their case builders and the mistakes
learners make in them are course-wide, so both assignments take them from here
instead of one borrowing from the other. The seed shapes are the course's
first example (3장 씨앗 예제), which later chapters reuse.
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
from coursekit.checks.picture import SeedExample, Table
from solutions import ch3_multihead as ref

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


def split_heads_case(seed: int, *, h: int | None = None, d_model: int | None = None) -> Case:
    """Random (n, d_model, h) with all-different lengths, or the given edge h and d_model."""
    rng = np.random.default_rng(seed)
    label = "무작위 모양" if h is None else f"경계 사례 h={h}, d_model={d_model}"
    if h is None:
        h, d_head = distinct_ints(rng, 2, 2, 6)
        d_model = h * d_head
    n = next(v for v in distinct_ints(rng, 5, 2, 9) if v not in (h, d_model, d_model // h))
    return Case(label, (rng.normal(size=(n, d_model)), h), ("M", "h"), seed)


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


def merge_heads_case(seed: int) -> Case:
    rng = np.random.default_rng(seed)
    h, n, d_head = distinct_ints(rng, 3, 2, 7)
    return Case("무작위 모양", (rng.normal(size=(h, n, d_head)),), ("heads_out",), seed)


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


# ---------------------------------------------------------------- hints
# Given one at a time to a learner stuck on the function (c.LiveGrading.hint_after graded
# attempts in a row), from a nudge to the idea just short of the code: never its code.

SPLIT_HEADS_HINTS = (
    "8칸짜리 자료를 4칸씩 두 전문가에게 나눠 주는 일입니다. 씨앗 예제에서 나눈 뒤 '나는' 의 "
    "앞 4칸이 head 0 에, 뒤 4칸이 head 1 에 그대로 들어갔는지 찍어 보세요.",
    "자르는 순서가 중요합니다. 먼저 낱말마다 폭 d_model 을 h 조각으로 자르면 "
    "(낱말, head, 칸) 모양이 됩니다. 이때 head 는 아직 가운데 축에 있습니다.",
    "끝으로 head 축을 맨 앞으로 옮겨 (head, 낱말, 칸) 이 되게 하세요. 처음부터 모양만 "
    "(h, n, d_head) 로 바꾸면 크기는 맞아도 낱말과 head 가 뒤섞입니다.",
)

MERGE_HEADS_HINTS = (
    "두 전문가의 의견을 회의록에 나란히 적는 일입니다. '나는' 의 줄에 head 0 의 4칸, "
    "바로 옆에 head 1 의 4칸이 이어져야 합니다.",
    "나누기를 거꾸로 밟으세요. 나눌 때 마지막에 한 일을 먼저 되돌려, head 축을 다시 "
    "낱말 뒤로 보내 (낱말, head, 칸) 으로 만듭니다.",
    "그다음 head 와 칸 두 축을 한 축으로 붙이면 (n, h * d_head) 입니다. 축을 되돌리지 "
    "않고 붙이면 모양은 맞아도 낱말이 섞입니다.",
)

ATTENTION_HINTS = (
    "질문(Q)과 제목(K)을 맞춰 본 점수표를 만들고, 행마다 비율로 바꾼 뒤, 그 비율대로 "
    "내용(V)을 섞는 세 단계입니다. 씨앗 예제 head 0 의 '나는' 행이 0.13 0.04 0.57 0.26 "
    "인지 보세요.",
    "점수표의 모양은 (…, n_q, n_k) 입니다. K 의 마지막 두 축만 뒤집어야 앞의 head 축이 "
    "그대로 남고, 점수는 Q 의 마지막 축 길이의 제곱근으로 나눕니다.",
    "비율은 마지막 축(Key 쪽)으로 정규화합니다. 그 가중치표를 V 에 곱한 출력과 "
    "가중치표를 둘 다 돌려주세요.",
)

# ---------------------------------------------------------------- the pages' seeded examples

# 3장's sentence and its flow of shapes, (4, 8) → (2, 4, 4) → (4, 8).
SEED_WORDS = ("나는", "학교에", "버스로", "갔다")
SEED_FLOW = (
    ("Q", (SEED_N, SEED_D_MODEL)),
    ("split_heads", (SEED_H, SEED_N, SEED_D_MODEL // SEED_H)),
    ("merge_heads", (SEED_N, SEED_D_MODEL)),
)


def seed_arrays():
    """X, W_Q, W_K, W_V, W_O of 3장 (np.random.seed(1)), as the notebook's `_seed_example()`."""
    rng = np.random.RandomState(1)
    X = rng.randn(SEED_N, SEED_D_MODEL)
    weights = tuple(rng.randn(SEED_D_MODEL, SEED_D_MODEL) * 0.5 for _ in range(4))
    return (X, *weights)


def ch3_seed_examples() -> dict[str, SeedExample]:
    """What 3장's visible cells run, per function, and how the page labels the results."""
    X, W_Q, W_K, W_V, W_O = seed_arrays()
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    Qh, Kh, Vh = (ref.split_heads(M, SEED_H) for M in (Q, K, V))
    scores = Qh @ Kh.transpose(0, 2, 1) / np.sqrt(SEED_D_MODEL // SEED_H)
    words = SEED_WORDS
    weights = Table("weights", words, words, weights=True)
    label = "씨앗 예제"
    return {
        "softmax": SeedExample(
            Case(label, (scores,), ("x",)), (Table("softmax(scores)", words, words, weights=True),)
        ),
        "split_heads": SeedExample(
            Case(label, (Q, SEED_H), ("M", "h")),
            (Table("split_heads(Q, 2)", words, flow=SEED_FLOW, step=1),),
        ),
        "scaled_dot_product_attention": SeedExample(
            Case(label, (Qh, Kh, Vh), ("Q", "K", "V")), (Table("output", words), weights)
        ),
        "merge_heads": SeedExample(
            Case(label, (Qh,), ("heads_out",)),
            (Table("merge_heads(heads_out)", words, flow=SEED_FLOW, step=2),),
        ),
        "multi_head_attention": SeedExample(
            Case(label, (X, W_Q, W_K, W_V, W_O, SEED_H), ("X", "W_Q", "W_K", "W_V", "W_O", "h")),
            (Table("output", words, flow=SEED_FLOW, step=2), weights),
        ),
    }
