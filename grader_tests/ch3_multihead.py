"""Hidden checks for ch3_multihead (3장 실습 3, Multi-Head 로 나누고 합치기).

`CHECKS` at the end declares one `HiddenCheck` per hidden test cell; the
cell calls the derived `check_<grade_id>(function)`. Random cases use
all-different axis lengths, so a swapped axis cannot hide behind equal sizes;
every case carries its seed, and `python -m coursekit.checks.reproduce
ch3_multihead SEED` rebuilds it for a TA.
"""

from __future__ import annotations

import numpy as np

from coursekit.checks.core import (
    Case,
    Evidence,
    Misconception,
    distinct_ints,
    same,
)
from coursekit.checks.declared import HiddenCheck, HiddenChecks
from solutions import ch3_multihead as ref

from .shared import (
    ATTENTION_HINTS,
    ATTENTION_MISTAKES,
    MERGE_HEADS_HINTS,
    MERGE_HEADS_MISTAKES,
    SEED_D_MODEL,
    SEED_H,
    SPLIT_HEADS_HINTS,
    SPLIT_HEADS_MISTAKES,
    attention_case,
    ch3_seed_examples,
    merge_heads_case,
    mha_case,
    split_heads_case,
)

ASSIGNMENT = "ch3_multihead"
# Names the seed's setup cells define at top level. A learner function that
# reads one of them instead of its own arguments only works on the seed.
NOTEBOOK_GLOBALS = frozenset(
    {"n", "h", "d_model", "d_head", "d_k", "words", "X", "Q", "K", "V", "Qh", "Kh", "Vh"}
)
# The functions multi_head_attention calls; the reference's stand in for the learner's.
MHA_HELPERS = ("softmax", "split_heads", "scaled_dot_product_attention", "merge_heads")

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


SPLIT_HEADS_RANDOM_CASES = [split_heads_case(seed) for seed in range(3200, 3212)]
SPLIT_HEADS_EDGE_CASES = [
    split_heads_case(3250, h=1, d_model=6),
    split_heads_case(3251, h=5, d_model=5),
    split_heads_case(3252, h=7, d_model=7),
]


# ---------------------------------------------------------------- attention


ATTENTION_RANDOM_CASES = [attention_case(seed) for seed in range(3300, 3312)]
ATTENTION_EDGE_CASES = [
    attention_case(3350, leading=()),
    attention_case(3351, leading=()),
    attention_case(3352, leading=(2, 3)),
    attention_case(3353, leading=(1,)),
]


# ---------------------------------------------------------------- merge_heads


MERGE_HEADS_RANDOM_CASES = [merge_heads_case(seed) for seed in range(3400, 3412)]


# ---------------------------------------------------------------- multi_head_attention


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


# ---------------------------------------------------------------- hints

HINTS = {
    "softmax": (
        "가중치표의 한 행은 낱말 하나가 다른 낱말들을 얼마나 참고하는지 나눈 비율입니다. "
        "씨앗 예제에서 행마다 합이 1 인지 찍어 보세요.",
        "합을 구하는 축은 마지막 축입니다. 3차원 입력(head, 낱말, 낱말)에서도 그렇고, "
        "나눌 때 그 축을 남겨 두어야 행마다 나뉩니다.",
        "값이 1e4 처럼 크면 지수가 넘칩니다. 행마다 가장 큰 값을 먼저 빼 두면 비율은 "
        "그대로이고 넘치지 않습니다.",
    ),
    "split_heads": SPLIT_HEADS_HINTS,
    "scaled_dot_product_attention": ATTENTION_HINTS,
    "merge_heads": MERGE_HEADS_HINTS,
    "multi_head_attention": (
        "자료를 전문가에게 나눠 주고, 전문가마다 의견을 내고, 회의록에 적어 팀장이 "
        "정리하는 네 단계입니다. 모양이 (4, 8) → (2, 4, 4) → (4, 8) 흐름을 어디서 "
        "벗어나는지 찍어 보세요.",
        "Q, K, V 는 자료 X 에 규칙표를 오른쪽에서 곱해 만듭니다. 나눈 뒤에는 앞에서 "
        "쓴 함수들을 그대로 부르면 됩니다.",
        "마지막 단계를 잊지 마세요. 회의록(이어 붙인 결과)에 팀장의 규칙표 W_O 를 곱한 "
        "것이 출력이고, 가중치표는 head 마다 (h, n, n) 그대로 돌려줍니다.",
    ),
    "mha_param_count": (
        "규칙표가 몇 장이고 한 장이 몇 칸인지 세어 보세요. 씨앗 예제의 답은 256 입니다.",
        "head 로 나눠도 규칙표 크기는 그대로입니다. 큰 규칙표 하나를 곱한 뒤 잘라 쓸 뿐, "
        "head 마다 새로 두지 않습니다.",
        "W_Q, W_K, W_V 에 팀장의 W_O 까지 네 장, 모두 d_model 행 d_model 열입니다.",
    ),
}


# ---------------------------------------------------------------- the hidden cells

CHECKS = HiddenChecks(
    ASSIGNMENT,
    reference=ref,
    notebook_globals=NOTEBOOK_GLOBALS,
    hints=HINTS,
    seed_examples=ch3_seed_examples(),
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
