"""Hidden checks for ch4_cross_attention (4장 Cross-Attention: 원문을 흘끗 보기).

`CHECKS` at the end declares one `HiddenCheck` per hidden test cell; the
cell calls the derived `check_<grade_id>(function)`. Random cases use
all-different axis lengths (n_dec ≠ n_enc, n_q ≠ n_k), and random masks keep
at least one True and one False in every row, so neither a mask nor its
inverse ever blocks a whole row. Every seeded case can be rebuilt with
`python -m coursekit.checks.reproduce ch4_cross_attention SEED`.

split_heads and merge_heads are ch3's functions: their case builders and
misconceptions come from grader_tests.ch3_multihead, with ch4's own seeds.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from coursekit.checks.core import (
    Case,
    Evidence,
    Misconception,
    distinct_ints,
    quiet_numpy,
    run_case,
    same,
    uses_attribute,
)
from coursekit.checks.declared import HiddenCheck, HiddenChecks
from coursekit.checks.picture import SeedExample, Table
from solutions import ch3_multihead as ch3_ref
from solutions import ch4_cross_attention as ref

from . import shared
from .shared import (
    MERGE_HEADS_HINTS,
    MERGE_HEADS_MISTAKES,
    SPLIT_HEADS_HINTS,
    SPLIT_HEADS_MISTAKES,
)

ASSIGNMENT = "ch4_cross_attention"
# The names this notebook defines at top level, which a learner function may read
# instead of its arguments (tests/test_catalog_in_process.py checks them against
# source/ch4_cross_attention/): the seed's, the demonstration's n (deleted after it),
# and the translator's in the last cells (X_dec, X_enc, H_enc, ...).
SEED_GLOBALS = {"rng", "d_k", "Q", "K", "V", "scores", "weights", "out", "n"}
TRANSLATOR_GLOBALS = {
    "enc_tokens",
    "dec_tokens",
    "X_dec",
    "X_enc",
    "W_Q",
    "W_K",
    "W_V",
    "W_O",
    "h",
    "H_enc",
    "w_enc",
    "dec_self",
    "w_self",
    "dec_cross",
    "w_cross",
}
NOTEBOOK_GLOBALS = frozenset(SEED_GLOBALS | TRANSLATOR_GLOBALS)
# The title of reads_notebook_globals names the globals the function read: the
# translator's (X_dec, H_enc, ...) are easily taken for its arguments.
READS_GLOBALS_TITLE = "함수 안에서 노트북 전역 변수({names})를 읽어 노트북의 예제에서만 맞습니다"

# Composite functions are graded on their own code: a wrong helper loses points
# in its own cells, not again here.
REFERENCE_HELPERS = (
    "split_heads",
    "merge_heads",
    "scaled_dot_product_attention",
    "causal_mask",
    "padding_mask",
)


def _predicting(*predictions: Callable) -> Callable[[Evidence], bool]:
    """A `detect` that fits when the result equals any one of several predictions."""

    def detect(ev: Evidence) -> bool:
        if ev.error is not None:
            return False
        with quiet_numpy():
            return any(same(ev.got, predict(*ev.case.args)) for predict in predictions)

    return detect


# ---------------------------------------------------------------- split_heads, merge_heads

SPLIT_HEADS_RANDOM_CASES = [shared.split_heads_case(seed) for seed in range(4200, 4212)]
MERGE_HEADS_RANDOM_CASES = [shared.merge_heads_case(seed) for seed in range(4400, 4412)]


def _hard_coded_translator_shape(shapes_from_arguments: str, reference, *arg_sets):
    """Code that is right on the translator's shapes (3 or 4 tokens, d_model 8, h 2) only.

    ch3's version of this misconception tries ch3's seed shape; a ch4 learner
    is more likely to write in the decoder's 3 tokens.
    """

    def detect(ev: Evidence) -> bool:
        if ev.globals_read():
            return False
        for args in arg_sets:
            try:
                with quiet_numpy():
                    if same(ev.fn(*copy.deepcopy(args)), reference(*args)):
                        return True
            except Exception:  # learner code may raise anything
                continue
        return False

    return Misconception(
        "hard_coded_seed_shape",
        "번역기 예제의 모양(번역문 3토큰 또는 원문 4토큰, d_model = 8, h = 2)에서만 맞습니다. 모양을 숫자로 적어 넣지 않았나요?",
        f"모양은 인자에서 꺼내 쓰세요: {shapes_from_arguments}. 번역문과 원문은 길이가 다릅니다.",
        detect=detect,
    )


_TRANSLATOR_ROWS = [np.random.default_rng(4).normal(size=(n, 8)) for n in (3, 4)]

SPLIT_MISTAKES = (
    *SPLIT_HEADS_MISTAKES,
    _hard_coded_translator_shape(
        "n, d_model = M.shape, d_head = d_model // h",
        ref.split_heads,
        *((M, 2) for M in _TRANSLATOR_ROWS),
    ),
)
MERGE_MISTAKES = (
    *MERGE_HEADS_MISTAKES,
    _hard_coded_translator_shape(
        "h, n, d_head = heads_out.shape",
        ref.merge_heads,
        *((ref.split_heads(M, 2),) for M in _TRANSLATOR_ROWS),
    ),
)


# ---------------------------------------------------------------- attention

# How each masked case's mask is shaped, given the leading axes of Q, K, V.
# "heads" stands for the head axis, "n_q"/"n_k" for the query and key lengths.
MASK_LAYOUTS = (
    ((), ("n_q", "n_k")),
    ((), (1, "n_k")),
    (("heads",), ("n_q", "n_k")),
    (("heads",), (1, "n_k")),
    (("heads",), ("heads", 1, "n_k")),
    (("heads",), ("heads", "n_q", "n_k")),
    (("heads", "extra"), (1, 1, "n_k")),
    (("heads", "extra"), ("extra", "n_q", "n_k")),
)


def random_mask(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """A bool mask whose every row (last axis) has at least one True and one False."""
    mask = rng.random(shape) < 0.6
    rows = mask.reshape(-1, shape[-1])
    for row in rows:
        if row.all():
            row[rng.integers(shape[-1])] = False
        if not row.any():
            row[rng.integers(shape[-1])] = True
    return rows.reshape(shape)


def attention_case(seed: int, layout: tuple | None) -> Case:
    """Q, K, V (and a mask when `layout` is given); d_k ≥ 3 so √d_k ≠ d_k ≠ 1 is visible."""
    rng = np.random.default_rng(seed)
    n_q, n_k, d_k, d_v, heads, extra = distinct_ints(rng, 6, 3, 9)
    sizes = {"n_q": n_q, "n_k": n_k, "heads": heads, "extra": extra, 1: 1}
    if layout is None:
        leading = ((heads,), (), (heads, extra))[seed % 3]
    else:
        leading = tuple(sizes[axis] for axis in layout[0])
    Q = rng.normal(size=(*leading, n_q, d_k))
    K = rng.normal(size=(*leading, n_k, d_k))
    V = rng.normal(size=(*leading, n_k, d_v))
    if layout is None:
        return Case(f"가림판 없음, 앞 축 {leading}", (Q, K, V), ("Q", "K", "V"), seed)
    mask = random_mask(rng, tuple(sizes[axis] for axis in layout[1]))
    label = f"가림판 {mask.shape}, 앞 축 {leading}"
    return Case(label, (Q, K, V, mask), ("Q", "K", "V", "mask"), seed)


ATTENTION_MASK_CASES = [
    attention_case(4300 + i, MASK_LAYOUTS[i % len(MASK_LAYOUTS)]) for i in range(16)
]
ATTENTION_NO_MASK_CASES = [attention_case(seed, None) for seed in range(4350, 4362)]


def _row_softmax(scores):
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _mask_inverted(Q, K, V, mask):
    return ref.scaled_dot_product_attention(Q, K, V, ~mask)


def _mask_after_softmax(Q, K, V, mask):
    _, weights = ref.scaled_dot_product_attention(Q, K, V)
    weights = weights * mask
    return weights @ V, weights


def _mask_multiplied(Q, K, V, mask):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    weights = _row_softmax(scores * mask)
    return weights @ V, weights


def _mask_ignored(Q, K, V, mask):
    return ref.scaled_dot_product_attention(Q, K, V)


SOFTMAX_NOT_DEFINED = Misconception(
    "softmax_not_defined",
    "3장의 softmax 를 불렀는데 이 노트북에는 softmax 함수가 없습니다",
    "softmax 를 함수 안에서 직접 계산하세요: 행마다 가장 큰 값을 빼고 np.exp, "
    "행의 합(axis=-1, keepdims=True)으로 나눕니다.",
    detect=lambda ev: isinstance(ev.error, NameError) and "softmax" in str(ev.error),
)

# ch3's attention mistakes that apply here unchanged (they read Q, K, V only).
CH3_ATTENTION_KEYS = (
    "no_scaling",
    "scaled_by_d_k",
    "k_transpose_on_stacked_heads",
    "weights_times_k",
    "output_weights_swapped",
    "attention_softmax_wrong_axis",
)
ATTENTION_NO_MASK_MISTAKES = (
    SOFTMAX_NOT_DEFINED,
    *(m for m in shared.ATTENTION_MISTAKES if m.key in CH3_ATTENTION_KEYS),
)


def _seen_without_mask(misconception: Misconception) -> Misconception:
    """The same misconception, recognised by calling the learner's function without the mask.

    ch3's diagnoses read an unmasked weight table (e.g. the implied √d_k), so
    the learner's function is called once more on the case's Q, K, V alone.
    """

    def detect(ev: Evidence) -> bool:
        Q, K, V, _ = ev.case.args
        bare = replace(ev.case, args=(Q, K, V), arg_names=("Q", "K", "V"))
        return misconception.explains(run_case(ev.fn, bare))

    return Misconception(
        misconception.key, misconception.title, misconception.advice, detect=detect
    )


ATTENTION_MASK_MISTAKES = (
    SOFTMAX_NOT_DEFINED,
    Misconception(
        "mask_inverted",
        "가림판을 거꾸로 썼습니다: True 칸을 가리고 False 칸을 봤습니다",
        "이 과제에서 True 는 '봐도 된다' 입니다 (PyTorch 의 F.scaled_dot_product_attention 과 같은 약속). "
        "np.where(mask, scores, -np.inf) 처럼 True 칸의 점수는 두고 False 칸만 -inf 로 바꾸세요.",
        predict=_mask_inverted,
    ),
    Misconception(
        "mask_after_softmax",
        "softmax 를 먼저 하고 가중치에 가림판을 씌워, 행의 합이 1 보다 작아졌습니다",
        "가림판은 softmax 앞에서 점수에 씌웁니다: 가릴 칸을 -inf 로 바꾼 뒤 softmax 하면 "
        "남은 칸끼리 나눠 가져 행마다 합이 1 이 됩니다.",
        predict=_mask_after_softmax,
    ),
    Misconception(
        "mask_multiplied",
        "점수에 가림판을 곱해(scores * mask) 가린 칸의 점수가 0 이 되었습니다. exp(0) = 1 이라 가린 낱말도 여전히 참고합니다",
        "곱하지 말고 바꾸세요: np.where(mask, scores, -np.inf). exp(-inf) = 0 이라야 가중치가 정확히 0 이 됩니다.",
        predict=_mask_multiplied,
    ),
    Misconception(
        "mask_ignored",
        "mask 를 받고도 쓰지 않아 가린 칸에도 가중치가 남았습니다",
        "mask 가 None 이 아니면 softmax 앞에서 scores = np.where(mask, scores, -np.inf) 를 하세요.",
        predict=_mask_ignored,
    ),
    *(_seen_without_mask(m) for m in ATTENTION_NO_MASK_MISTAKES[1:]),
)


# ---------------------------------------------------------------- causal_mask, padding_mask

# n = 1 comes last: its one cell cannot tell an upper triangle from a blocked diagonal.
CAUSAL_MASK_CASES = [Case(f"n = {n}", (n,), ("n",)) for n in (*range(2, 10), 1)]


def _right_values_not_bool(reference: Callable) -> Callable[[Evidence], bool]:
    def detect(ev: Evidence) -> bool:
        got, expected = ev.got, reference(*ev.case.args)
        return (
            isinstance(got, np.ndarray)
            and got.dtype != bool
            and got.shape == expected.shape
            and np.array_equal(got.astype(bool), expected)
        )

    return detect


def _mask_not_bool(reference: Callable) -> Misconception:
    return Misconception(
        "mask_not_bool",
        "가림판의 칸 값은 맞지만 True/False(bool) 가 아니라 숫자(0/1) 배열입니다",
        "dtype=bool 로 만드세요: np.ones((n, n), dtype=bool), 또는 비교 연산(!=, >=)의 결과는 "
        "처음부터 bool 입니다. 숫자 가림판은 scores * mask 처럼 곱하는 실수로 이어지기 쉽습니다.",
        detect=_right_values_not_bool(reference),
    )


CAUSAL_MASK_MISTAKES = (
    Misconception(
        "causal_upper_triangle",
        "미래 가림판을 위 삼각형으로 만들었습니다. i 행은 자기 자신과 앞쪽(j ≤ i)만 True 여야 합니다",
        "번역가는 아직 쓰지 않은 뒤쪽 낱말을 볼 수 없습니다. True = '봐도 된다' 이므로 아래 삼각형 "
        "np.tril(np.ones((n, n), dtype=bool)) 입니다. (PyTorch nn.Transformer 의 mask 는 반대로 "
        "True = '가린다' 라서 위 삼각형을 씁니다.)",
        detect=_predicting(
            lambda n: np.triu(np.ones((n, n), dtype=bool)),
            lambda n: np.triu(np.ones((n, n), dtype=bool), k=1),
        ),
    ),
    Misconception(
        "causal_blocks_diagonal",
        "대각선까지 가렸습니다(j < i 만 True). 낱말은 자기 자신도 봐야 합니다",
        "[i, j] 는 j ≤ i 일 때 True: np.tril(..., k=0) 입니다. 첫 행이 모두 False 면 "
        "<시작> 이 볼 곳이 하나도 없어 가중치가 nan 이 됩니다.",
        predict=lambda n: np.tril(np.ones((n, n), dtype=bool), k=-1),
    ),
    _mask_not_bool(ref.causal_mask),
)


# Where the padding goes in each padding_mask case.
PAD_LAYOUTS = ("끝", "앞", "가운데", "여기저기")
PAD_IDS = (1, 3, 99, -1, 7, 2, 5, 100)


def padding_case(seed: int) -> Case:
    """Token ids with pad_id ≠ 0, where 0 is a real token, padded at the end, front or middle."""
    rng = np.random.default_rng(seed)
    index = seed - 4600
    pad_id, layout = PAD_IDS[index], PAD_LAYOUTS[index % len(PAD_LAYOUTS)]
    n_k = int(rng.integers(5, 10))
    n_pad = int(rng.integers(1, n_k - 2))
    vocabulary = np.setdiff1d(np.arange(0, 40), [pad_id])
    token_ids = rng.choice(vocabulary, size=n_k)
    if layout == "끝":
        padded = np.arange(n_k - n_pad, n_k)
    elif layout == "앞":
        padded = np.arange(n_pad)
    elif layout == "가운데":
        start = int(rng.integers(1, n_k - n_pad))
        padded = np.arange(start, start + n_pad)
    else:
        padded = rng.choice(n_k, size=n_pad, replace=False)
    token_ids[padded] = pad_id
    # 0 is an ordinary token here, so comparing with 0 instead of pad_id shows.
    token_ids[np.setdiff1d(np.arange(n_k), padded)[0]] = 0
    label = f"pad_id={pad_id}, 패딩 위치: {layout}"
    return Case(label, (token_ids, pad_id), ("token_ids", "pad_id"), seed)


PADDING_CASES = [padding_case(seed) for seed in range(4600, 4600 + len(PAD_IDS))]

PADDING_MASK_MISTAKES = (
    Misconception(
        "padding_mask_inverted",
        "패딩 칸을 True 로, 진짜 낱말을 False 로 거꾸로 만들었습니다",
        "True = '봐도 된다' 입니다: 진짜 낱말이 True 가 되도록 token_ids != pad_id 로 비교하세요.",
        predict=lambda ids, pad_id: (ids == pad_id)[np.newaxis, :],
    ),
    Misconception(
        "padding_ignores_pad_id",
        "pad_id 를 쓰지 않고 늘 0 과 비교했습니다. 패딩 번호는 토크나이저마다 다릅니다",
        "token_ids != pad_id 로 비교하세요. 이 검사에는 0 이 진짜 낱말 번호인 문장도 있습니다.",
        predict=lambda ids, pad_id: (ids != 0)[np.newaxis, :],
    ),
    Misconception(
        "padding_mask_without_query_axis",
        "모양이 (n_k,) 입니다. 질문 축을 앞에 붙여 (1, n_k) 로 돌려줘야 합니다",
        "(token_ids != pad_id)[np.newaxis, :] 처럼 축을 하나 붙이세요. (1, n_k) 는 가중치표 "
        "(n_q, n_k) 의 모든 행(모든 질문)에 같은 가림판으로 퍼집니다.",
        predict=lambda ids, pad_id: ids != pad_id,
    ),
    _mask_not_bool(ref.padding_mask),
)


# ---------------------------------------------------------------- masked_self_attention

MSA_RANDOM_CASES = [shared.mha_case(seed) for seed in range(4500, 4512)]


def _attend(X_q, X_kv, W_Q, W_K, W_V, W_O, h, mask=None, *, mix=True):
    """Multi-head attention of X_q's queries over X_kv, built from the reference pieces."""
    Qh = ref.split_heads(X_q @ W_Q, h)
    Kh, Vh = ref.split_heads(X_kv @ W_K, h), ref.split_heads(X_kv @ W_V, h)
    heads_out, weights = ref.scaled_dot_product_attention(Qh, Kh, Vh, mask=mask)
    concat = ref.merge_heads(heads_out)
    return (concat @ W_O if mix else concat), weights


MSA_MISTAKES = (
    Misconception(
        "causal_mask_forgotten",
        "미래 가림판을 씌우지 않아 낱말마다 뒤쪽(아직 쓰지 않은) 낱말까지 봤습니다",
        "scaled_dot_product_attention(Qh, Kh, Vh, mask=causal_mask(n)) 처럼 (n, n) 가림판을 넘기세요. "
        "번역가는 아직 쓰지 않은 번역문을 볼 수 없습니다.",
        predict=ch3_ref.multi_head_attention,
    ),
    Misconception(
        "forgets_w_o",
        "head 결과를 이어 붙인 뒤 W_O 를 곱하지 않았습니다",
        "output = merge_heads(heads_out) @ W_O 로 마지막에 W_O 로 섞으세요.",
        predict=lambda X, W_Q, W_K, W_V, W_O, h: _attend(
            X, X, W_Q, W_K, W_V, W_O, h, ref.causal_mask(len(X)), mix=False
        ),
    ),
)


# ---------------------------------------------------------------- multi_head_cross_attention

CROSS_ARG_NAMES = ("X_dec", "H_enc", "W_Q", "W_K", "W_V", "W_O", "h", "enc_mask")


def cross_case(seed: int, *, with_mask: bool) -> Case:
    rng = np.random.default_rng(seed)
    h, d_head = distinct_ints(rng, 2, 2, 5)
    d_model = h * d_head
    others = [v for v in distinct_ints(rng, 7, 2, 9) if v not in (h, d_head, d_model)]
    n_dec, n_enc = others[:2]
    X_dec = rng.normal(size=(n_dec, d_model))
    H_enc = rng.normal(size=(n_enc, d_model))
    weights = tuple(rng.normal(size=(d_model, d_model)) * 0.5 for _ in range(4))
    args = (X_dec, H_enc, *weights, h)
    if not with_mask:
        return Case("무작위 모양", args, CROSS_ARG_NAMES[:7], seed)
    enc_mask = random_mask(rng, (n_enc,))
    padded = [int(i) for i in np.flatnonzero(~enc_mask)]
    label = f"원문 패딩 위치 {padded}"
    return Case(label, (*args, enc_mask), CROSS_ARG_NAMES, seed)


CROSS_RANDOM_CASES = [cross_case(seed, with_mask=False) for seed in range(4700, 4710)]
CROSS_MASK_CASES = [cross_case(seed, with_mask=True) for seed in range(4750, 4760)]


def _cross_mistake(key: str, title: str, advice: str, predict: Callable) -> Misconception:
    """A cross-attention mistake, recognised with and without an encoder mask.

    With an encoder mask the mistaken code usually cannot even apply it (a
    weight table of the wrong shape has no room for an (n_enc,) mask), so the
    learner's function is called again without the mask and compared with
    the prediction.
    """

    def detect(ev: Evidence) -> bool:
        args = ev.case.args
        if len(args) < 8 or args[7] is None:
            return False
        bare = replace(ev.case, args=args[:7], arg_names=CROSS_ARG_NAMES[:7])
        rerun = run_case(ev.fn, bare)
        if rerun.error is not None:
            return False
        with quiet_numpy():
            return same(rerun.got, predict(*args[:7]))

    return Misconception(key, title, advice, predict=predict, detect=detect)


def _kv_from_decoder(X_dec, H_enc, W_Q, W_K, W_V, W_O, h, enc_mask=None):
    return _attend(X_dec, X_dec, W_Q, W_K, W_V, W_O, h)


def _q_from_encoder(X_dec, H_enc, W_Q, W_K, W_V, W_O, h, enc_mask=None):
    return _attend(H_enc, X_dec, W_Q, W_K, W_V, W_O, h)


def _cross_without_w_o(X_dec, H_enc, W_Q, W_K, W_V, W_O, h, enc_mask=None):
    mask = None if enc_mask is None else enc_mask[np.newaxis, :]
    return _attend(X_dec, H_enc, W_Q, W_K, W_V, W_O, h, mask, mix=False)


def _enc_mask_ignored(X_dec, H_enc, W_Q, W_K, W_V, W_O, h, enc_mask=None):
    return _attend(X_dec, H_enc, W_Q, W_K, W_V, W_O, h)


def _uses_causal_mask(ev: Evidence) -> bool:
    return any(uses_attribute(ev.fn, name) for name in ("causal_mask", "tril", "triu"))


CROSS_MISTAKES = (
    _cross_mistake(
        "kv_from_decoder",
        "Key 와 Value 를 Decoder 쪽(X_dec)에서 만들었습니다. 이러면 번역문이 자기 자신만 보는 Self-Attention 입니다",
        "원문 낱말의 제목표와 내용을 봐야 합니다: K, V = H_enc @ W_K, H_enc @ W_V. "
        "가중치표는 (h, n_dec, n_enc) 가 됩니다.",
        _kv_from_decoder,
    ),
    _cross_mistake(
        "q_from_encoder",
        "Query 를 Encoder 쪽(H_enc)에서, Key·Value 를 Decoder 쪽에서 만들어 역할이 뒤바뀌었습니다",
        "'무엇을 찾나'를 묻는 쪽은 번역문입니다: Q = X_dec @ W_Q, K 와 V 는 H_enc 에서. "
        "가중치표의 행 수는 번역문 길이 n_dec, 열 수는 원문 길이 n_enc 입니다.",
        _q_from_encoder,
    ),
    Misconception(
        "enc_mask_ignored",
        "enc_mask 를 쓰지 않아 원문의 패딩 칸에도 가중치가 갔습니다",
        "enc_mask 가 있으면 (n_enc,) 를 (1, 1, n_enc) 로 늘려(enc_mask[np.newaxis, np.newaxis, :]) "
        "scaled_dot_product_attention 의 mask 로 넘기세요. 패딩은 원문에 없는 낱말입니다.",
        predict=_enc_mask_ignored,
    ),
    _cross_mistake(
        "forgets_w_o",
        "head 결과를 이어 붙인 뒤 W_O 를 곱하지 않았습니다",
        "output = merge_heads(heads_out) @ W_O 로 마지막에 W_O 로 섞으세요.",
        _cross_without_w_o,
    ),
    Misconception(
        "causal_mask_in_cross_attention",
        "Cross-Attention 에 미래 가림판을 씌웠습니다",
        "원문은 이미 다 읽었으므로 미래를 가릴 필요가 없습니다. Cross-Attention 에서 가리는 것은 "
        "원문의 패딩(enc_mask)뿐입니다. 게다가 가중치표가 (n_dec, n_enc) 라 (n_dec, n_dec) 가림판은 "
        "모양도 맞지 않습니다.",
        detect=_uses_causal_mask,
    ),
)


# ---------------------------------------------------------------- the page's seeded examples

DEC_TOKENS = ("<시작>", "저는", "학생")  # the translation so far (Decoder)
ENC_TOKENS = ("I", "am", "a", "student")  # the source sentence (Encoder)
PAD_EXAMPLE = (17, 4, 9, 23, 0, 0)  # I am a student <pad> <pad>
SEED_LABEL = "강의 예제"


def translator_arrays():
    """X_dec, X_enc, W_Q, W_K, W_V, W_O as the notebook's `_translator_example()`."""
    rng = np.random.default_rng(5)
    X_dec, X_enc = rng.normal(size=(3, 8)), rng.normal(size=(4, 8))
    return (X_dec, X_enc, *(rng.normal(size=(8, 8)) * 0.5 for _ in range(4)))


def seed_examples() -> dict[str, SeedExample]:
    """What the page's visible cells run, per function, and how the page labels the results."""
    X_dec, X_enc, W_Q, W_K, W_V, W_O = translator_arrays()
    dec, enc = DEC_TOKENS, ENC_TOKENS
    sentences = (("Q", X_dec @ W_Q, dec), ("K", X_enc @ W_K, enc))
    flows = {
        name: ((name, (n, 8)), ("split_heads", (2, n, 4)), ("merge_heads", (n, 8)))
        for name, n in (("Q", 3), ("K", 4))
    }
    flow = flows["Q"]
    rng = np.random.default_rng(0)  # `_seed_example()`: 3 tokens ask, 4 answer
    Q_seed, K_seed, V_seed = (rng.normal(size=(n, 4)) for n in (3, 4, 4))
    cross_names = ("X_dec", "H_enc", "W_Q", "W_K", "W_V", "W_O", "h")
    future = ref.causal_mask(3)
    weights = ("X_dec", "W_Q", "W_K", "W_V", "W_O", "h")
    return {
        # The visible cells split and merge both sentences: the translation's Q, the source's K.
        "split_heads": tuple(
            SeedExample(
                Case(SEED_LABEL, (M, 2), ("M", "h")),
                (Table(f"split_heads({name}, 2)", tokens, flow=flows[name], step=1),),
            )
            for name, M, tokens in sentences
        ),
        "merge_heads": tuple(
            SeedExample(
                Case(SEED_LABEL, (ref.split_heads(M, 2),), ("heads_out",)),
                (Table("merge_heads(heads_out)", tokens, flow=flows[name], step=2),),
            )
            for name, M, tokens in sentences
        ),
        "scaled_dot_product_attention": (
            SeedExample(
                Case(SEED_LABEL, (Q_seed, K_seed, V_seed), ("Q", "K", "V")),
                (Table("output", dec), Table("weights", dec, enc, weights=True)),
            ),
            SeedExample(
                Case(
                    SEED_LABEL, (Q_seed, Q_seed, Q_seed), ("Q", "K", "V"), kwargs={"mask": future}
                ),
                (Table("output", dec), Table("weights", dec, dec, weights=True)),
                causal=True,
            ),
        ),
        "causal_mask": SeedExample(
            Case(SEED_LABEL, (3,), ("n",)), (Table("causal_mask(3)", dec, dec),), causal=True
        ),
        "padding_mask": SeedExample(
            Case(SEED_LABEL, (np.array(PAD_EXAMPLE),), ("token_ids",)),
            (Table("padding_mask(token_ids)", None, (*enc, "<pad>", "<pad>")),),
        ),
        "masked_self_attention": SeedExample(
            Case(SEED_LABEL, (X_dec, W_Q, W_K, W_V, W_O, 2), ("X", *weights[1:])),
            (Table("output", dec, flow=flow, step=2), Table("weights", dec, dec, weights=True)),
            causal=True,
        ),
        "multi_head_cross_attention": tuple(
            SeedExample(
                Case(SEED_LABEL, (X_dec, X_enc, W_Q, W_K, W_V, W_O, 2), cross_names, kwargs=kwargs),
                (Table("output", dec, flow=flow, step=2), Table("weights", dec, enc, weights=True)),
            )
            for kwargs in ({}, {"enc_mask": np.array([True, True, True, False])})
        ),
    }


# ---------------------------------------------------------------- the hidden cells

# ---------------------------------------------------------------- hints

HINTS = {
    "split_heads": SPLIT_HEADS_HINTS,
    "merge_heads": MERGE_HEADS_HINTS,
    "scaled_dot_product_attention": (
        "계산식은 3장과 같고 가림판 하나가 더해졌습니다. 씨앗 예제에서 가린 칸의 비율이 "
        "정확히 0 이고 행마다 합이 1 인지 찍어 보세요.",
        "가림판의 True 는 '봐도 된다' 입니다. 가릴 칸은 비율로 바꾸기 전에 점수를 음의 "
        "무한대처럼 아주 작게 만들어야 비율이 정확히 0 이 됩니다.",
        "비율로 바꾼 뒤에 0 을 곱하면 행의 합이 1 에서 벗어납니다. 가림판은 점수표 "
        "모양으로 퍼져 맞춰지니, 모양을 바꾸지 말고 그대로 쓰세요.",
    ),
    "causal_mask": (
        "번역가는 아직 쓰지 않은 뒷부분을 볼 수 없습니다. n = 3 일 때 표를 손으로 그려 "
        "보세요. 행 i 는 자기와 앞 낱말만 봅니다.",
        "[i, j] 는 j 가 i 보다 크지 않을 때 True 입니다. 대각선도 포함합니다.",
        "대각선을 포함한 아래 삼각형만 True 인 (n, n) 표입니다. 1 과 0 의 숫자 표가 "
        "아니라 참·거짓 표로 돌려주세요.",
    ),
    "padding_mask": (
        "패딩은 길이를 맞추려 채운 빈칸입니다. 빈칸이 아닌 낱말만 봐도 된다(True)고 표시합니다.",
        "빈칸 번호가 늘 0 은 아닙니다. pad_id 로 받은 번호와 같은 자리만 False 입니다.",
        "결과는 Key 쪽 길이만큼의 한 행, 모양 (1, n_k) 입니다. 앞에 축 하나를 더해 두면 "
        "점수표의 모든 행에 퍼져 적용됩니다.",
    ),
    "masked_self_attention": (
        "Multi-Head Attention 의 네 단계에 미래 가림판 하나가 더해집니다. 씨앗 예제의 "
        "가중치표에서 대각선 위가 모두 0 인지 보세요.",
        "미래 가림판은 낱말 수 n 으로 하나만 만들면 됩니다. head 마다 같은 표가 퍼져 적용됩니다.",
        "Q, K, V 를 모두 같은 X 에서 만들어 나누고, 가림판을 건네 Attention 을 계산한 "
        "뒤, 이어 붙여 팀장의 W_O 로 정리하세요.",
    ),
    "multi_head_cross_attention": (
        "번역가가 원문을 흘끗 보는 자리입니다. 질문(Q)은 번역문(Decoder)에서, 제목과 "
        "내용(K, V)은 원문(Encoder)에서 옵니다. 가중치표는 (번역문 길이, 원문 길이) 입니다.",
        "Cross-Attention 에는 미래 가림판이 없습니다. 원문은 다 읽었으니까요. 가리는 "
        "것은 원문의 패딩뿐입니다.",
        "enc_mask 는 원문 낱말마다 참·거짓 한 줄입니다. 점수표의 모든 행에 퍼지도록 "
        "원문 축 앞에 축을 더해 Attention 에 건네고, 없을 때는 가리지 않습니다.",
    ),
}

CHECKS = HiddenChecks(
    ASSIGNMENT,
    reference=ref,
    notebook_globals=NOTEBOOK_GLOBALS,
    reads_globals_title=READS_GLOBALS_TITLE,
    hints=HINTS,
    seed_examples=seed_examples(),
    checks=[
        HiddenCheck(
            "split_heads_random_shapes",
            "split_heads",
            "무작위 모양(낱말 수 n 이 제각각)",
            SPLIT_HEADS_RANDOM_CASES,
            SPLIT_MISTAKES,
        ),
        HiddenCheck(
            "merge_heads_random_shapes",
            "merge_heads",
            "무작위 모양(낱말 수 n 이 제각각)",
            MERGE_HEADS_RANDOM_CASES,
            MERGE_MISTAKES,
        ),
        HiddenCheck(
            "attention_random_masks",
            "scaled_dot_product_attention",
            "무작위 가림판((n_q, n_k), (1, n_k), (h, 1, n_k) 등 퍼지는 모양)",
            ATTENTION_MASK_CASES,
            ATTENTION_MASK_MISTAKES,
        ),
        HiddenCheck(
            "attention_no_mask_random",
            "scaled_dot_product_attention",
            "가림판 없이 무작위 모양(n_q ≠ n_k, 앞 축 0~2개)",
            ATTENTION_NO_MASK_CASES,
            ATTENTION_NO_MASK_MISTAKES,
        ),
        HiddenCheck(
            "causal_mask_sizes",
            "causal_mask",
            "크기 n = 1 ~ 9",
            CAUSAL_MASK_CASES,
            CAUSAL_MASK_MISTAKES,
        ),
        HiddenCheck(
            "padding_mask_pad_ids",
            "padding_mask",
            "0 이 아닌 pad_id, 앞·가운데·끝의 패딩",
            PADDING_CASES,
            PADDING_MASK_MISTAKES,
        ),
        HiddenCheck(
            "masked_self_attention_random",
            "masked_self_attention",
            "무작위 모양",
            MSA_RANDOM_CASES,
            MSA_MISTAKES,
            helpers=REFERENCE_HELPERS,
        ),
        HiddenCheck(
            "cross_attention_random",
            "multi_head_cross_attention",
            "무작위 모양(n_dec ≠ n_enc, enc_mask 없음)",
            CROSS_RANDOM_CASES,
            CROSS_MISTAKES,
            helpers=REFERENCE_HELPERS,
        ),
        HiddenCheck(
            "cross_attention_enc_mask",
            "multi_head_cross_attention",
            "원문(Encoder) 패딩 가림판 enc_mask",
            CROSS_MASK_CASES,
            CROSS_MISTAKES,
            helpers=REFERENCE_HELPERS,
        ),
    ],
)
# check_<grade_id>(function), which each hidden cell calls.
globals().update(CHECKS.wrappers())
