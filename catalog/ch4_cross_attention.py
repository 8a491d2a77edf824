"""Known mistakes and correct variants for ch4_cross_attention, written as a learner would.

Each entry replaces one answer cell in an otherwise correct notebook. In the
notebook the functions call each other: masked_self_attention calls the
learner's split_heads, scaled_dot_product_attention, causal_mask and
merge_heads; multi_head_cross_attention the same except causal_mask. So a
helper's mistake that changes the seeded example also costs the VISIBLE cells
of its callers (masked_self_attention_seed, cross_attention_seed; the latter
also applies an encoder mask). The callers' hidden cells isolate the helpers
and do not fail for them. The visible cells pass their masks as literal
arrays, so causal_mask and padding_mask mistakes reach no other visible cell
except through masked_self_attention.

The notebook deletes its demonstration global `n`, so code that reads `n`
raises NameError there; `d_k` (4, the seed's) stays defined, and the
translator's names (X_dec, X_enc, H_enc, ...) are defined only in the last
cells, after every test.

Lines that read notebook globals on purpose carry `# noqa: F821`.
"""

import numpy as np

from catalog import Catalog, UnknownMistake

# In the notebook these names are the learner's own answers (or the reference's);
# imported here so that each entry also runs on its own.
from solutions.ch4_cross_attention import (
    causal_mask,
    merge_heads,
    scaled_dot_product_attention,
    split_heads,
)

catalog = Catalog(
    "ch4_cross_attention",
    page_outputs=("(3, 4) (3, 4) (3, 4)", "[1. 1. 1.]"),
    # A (n, 1) column instead of a (1, n) row: a mistake the catalog does not name.
    unknown_mistake=UnknownMistake(
        "padding_mask",
        (
            "def padding_mask(token_ids, pad_id=0):\n    return (token_ids != pad_id)[:, None]\n",
            "def padding_mask(token_ids, pad_id=0):\n"
            "    keep = token_ids != pad_id\n"
            "    return keep.reshape(-1, 1)\n",
        ),
    ),
    # split_heads' and merge_heads' global-reading mistakes read `n`, which this
    # notebook deletes after its demonstration: their visible tests fail with a NameError.
    reads_live_globals=frozenset({"scaled_dot_product_attention__reads_notebook_globals"}),
)

# Visible cells of the composite functions, on the seeded translator example.
MSA_SEED = "masked_self_attention_seed"
CROSS_SEED = "cross_attention_seed"
COMPOSITE_SEEDS = {MSA_SEED, CROSS_SEED}

SPLIT_HEADS_ALL = {"split_heads_any_n", "split_heads_random_shapes"}
MERGE_HEADS_ALL = {"merge_heads_any_n", "merge_heads_random_shapes"}
ATTENTION_HIDDEN = {"attention_random_masks", "attention_no_mask_random"}
ATTENTION_MASKED = {"attention_masked_seed", "attention_random_masks"}
ATTENTION_ALL = ATTENTION_HIDDEN | {"attention_seed_example", "attention_masked_seed"}
CAUSAL_MASK_ALL = {"causal_mask_small", "causal_mask_sizes"}
PADDING_MASK_ALL = {"padding_mask_example", "padding_mask_pad_ids"}
MSA_ALL = {MSA_SEED, "masked_self_attention_random"}
CROSS_ALL = {CROSS_SEED, "cross_attention_random", "cross_attention_enc_mask"}

# ---------------------------------------------------------------- split_heads


@catalog.mistake(fails=SPLIT_HEADS_ALL | COMPOSITE_SEEDS)
def split_heads__reshape_without_transpose(M, h):
    n, d_model = M.shape
    return M.reshape(h, n, d_model // h)


@catalog.mistake(fails=SPLIT_HEADS_ALL | COMPOSITE_SEEDS)
def split_heads__interleaved_head_columns(M, h):
    n, d_model = M.shape
    return M.reshape(n, d_model // h, h).transpose(2, 0, 1)


@catalog.mistake(fails=SPLIT_HEADS_ALL | COMPOSITE_SEEDS)
def split_heads__split_wrong_axis_order(M, h):
    n, d_model = M.shape
    return M.reshape(n, h, d_model // h).transpose(1, 2, 0)


@catalog.mistake(fails=SPLIT_HEADS_ALL | COMPOSITE_SEEDS)
def split_heads__reads_notebook_globals(M, h):
    # ch3's page body with a global n: the notebook has no n after its demonstration.
    d_head = M.shape[1] // h
    return M.reshape(n, h, d_head).transpose(1, 0, 2)  # noqa: F821


@catalog.mistake(fails=SPLIT_HEADS_ALL | {CROSS_SEED})
def split_heads__hard_coded_seed_shape(M, h):
    # The decoder's 3 tokens written in: masked self-attention on the 3-token decoder
    # still works, the encoder's 4 tokens break it.
    return M.reshape(3, 2, 4).transpose(1, 0, 2)


@catalog.variant
def split_heads__split_and_stack(M, h):
    return np.stack(np.split(M, h, axis=1))


# ---------------------------------------------------------------- merge_heads


@catalog.mistake(fails=MERGE_HEADS_ALL | COMPOSITE_SEEDS)
def merge_heads__merge_without_transpose(heads_out):
    h, n, d_head = heads_out.shape
    return heads_out.reshape(n, h * d_head)


@catalog.mistake(fails=MERGE_HEADS_ALL | COMPOSITE_SEEDS)
def merge_heads__merge_interleaved(heads_out):
    h, n, d_head = heads_out.shape
    return heads_out.transpose(1, 2, 0).reshape(n, h * d_head)


@catalog.mistake(fails=MERGE_HEADS_ALL | COMPOSITE_SEEDS)
def merge_heads__merge_stacked_rows(heads_out):
    # (h * n, d_head), so `@ W_O` raises inside both composite functions.
    return np.vstack(heads_out)


@catalog.mistake(fails=MERGE_HEADS_ALL | COMPOSITE_SEEDS)
def merge_heads__reads_notebook_globals(heads_out):
    # ch3's n and d_model: this notebook defines neither.
    return heads_out.transpose(1, 0, 2).reshape(n, d_model)  # noqa: F821


@catalog.mistake(fails=MERGE_HEADS_ALL | COMPOSITE_SEEDS)
def merge_heads__hard_coded_seed_shape(heads_out):
    # ch3's seed shape, which is also the encoder's: the decoder's 3 tokens break it.
    return heads_out.transpose(1, 0, 2).reshape(4, 8)


@catalog.variant
def merge_heads__hstack(heads_out):
    return np.hstack(heads_out)


# ---------------------------------------------------------------- scaled_dot_product_attention


@catalog.mistake(fails=ATTENTION_ALL | COMPOSITE_SEEDS)
def scaled_dot_product_attention__softmax_not_defined(Q, K, V, mask=None):
    # ch3's body: this notebook has no softmax function.
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores)  # noqa: F821
    return weights @ V, weights


@catalog.mistake(fails=ATTENTION_MASKED | COMPOSITE_SEEDS)
def scaled_dot_product_attention__mask_inverted(Q, K, V, mask=None):
    # PyTorch nn.Transformer's convention (True = blocked) instead of this course's.
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, weights


@catalog.mistake(fails=ATTENTION_MASKED | COMPOSITE_SEEDS)
def scaled_dot_product_attention__mask_after_softmax(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    if mask is not None:
        weights = np.where(mask, weights, 0.0)
    return weights @ V, weights


@catalog.mistake(fails=ATTENTION_MASKED | COMPOSITE_SEEDS)
def scaled_dot_product_attention__mask_multiplied(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores * mask
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, weights


@catalog.mistake(fails=ATTENTION_MASKED | COMPOSITE_SEEDS)
def scaled_dot_product_attention__mask_ignored(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, weights


@catalog.mistake(fails=ATTENTION_ALL | COMPOSITE_SEEDS)
def scaled_dot_product_attention__no_scaling(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, weights


@catalog.mistake(fails=ATTENTION_ALL | COMPOSITE_SEEDS)
def scaled_dot_product_attention__scaled_by_d_k(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / Q.shape[-1]
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, weights


@catalog.mistake(fails={"attention_random_masks", "attention_no_mask_random"})
def scaled_dot_product_attention__reads_notebook_globals(Q, K, V, mask=None):
    # The page's line with the seed's d_k = 4; the translator's heads are 4 wide too.
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)  # noqa: F821
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, weights


@catalog.mistake(fails=ATTENTION_HIDDEN | COMPOSITE_SEEDS)
def scaled_dot_product_attention__k_transpose_on_stacked_heads(Q, K, V, mask=None):
    # The page's K.T: right for the 2-D seeded cells, wrong once heads are stacked.
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, weights


@catalog.mistake(fails=ATTENTION_ALL | COMPOSITE_SEEDS)
def scaled_dot_product_attention__weights_times_k(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ K, weights


@catalog.mistake(fails=ATTENTION_ALL | COMPOSITE_SEEDS)
def scaled_dot_product_attention__output_weights_swapped(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights, weights @ V


@catalog.mistake(fails=ATTENTION_ALL | COMPOSITE_SEEDS)
def scaled_dot_product_attention__attention_softmax_wrong_axis(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-2, keepdims=True))
    weights = e / e.sum(axis=-2, keepdims=True)
    return weights @ V, weights


@catalog.variant
def scaled_dot_product_attention__large_negative_fill(Q, K, V, mask=None):
    # exp(-1e9 - max) underflows to exactly 0.0 in float64.
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -1e9)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, weights


@catalog.variant
def scaled_dot_product_attention__einsum(Q, K, V, mask=None):
    scores = np.einsum("...qd,...kd->...qk", Q, K) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return np.einsum("...qk,...kv->...qv", weights, V), weights


@catalog.variant
def scaled_dot_product_attention__loop_per_head(Q, K, V, mask=None):
    # One 2-D attention per index of the (broadcast) leading axes.
    scores = Q @ np.swapaxes(K, -1, -2)
    if mask is None:
        mask = np.ones(scores.shape, dtype=bool)
    mask = np.broadcast_to(mask, np.broadcast_shapes(mask.shape, scores.shape))
    lead = mask.shape[:-2]
    Q, K, V = (np.broadcast_to(A, lead + A.shape[-2:]) for A in (Q, K, V))
    weights = np.zeros(mask.shape)
    output = np.zeros((*lead, Q.shape[-2], V.shape[-1]))
    for i in np.ndindex(*lead):
        s = Q[i] @ K[i].T / np.sqrt(Q.shape[-1])
        for row in range(s.shape[0]):
            seen = mask[i][row]
            e = np.exp(s[row][seen] - s[row][seen].max())
            weights[i][row][seen] = e / e.sum()
        output[i] = weights[i] @ V[i]
    return output, weights


@catalog.variant
def scaled_dot_product_attention__q_scaled_first(Q, K, V, mask=None):
    Q_scaled = Q / np.sqrt(Q.shape[-1])
    scores = Q_scaled @ np.swapaxes(K, -1, -2)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, weights


@catalog.variant
def scaled_dot_product_attention__renormalised_after_softmax(Q, K, V, mask=None):
    # Masking after softmax is right once each row is divided by its new sum.
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    if mask is not None:
        e = e * mask
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, weights


@catalog.variant
def scaled_dot_product_attention__additive_mask(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores + np.where(mask, 0.0, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, weights


@catalog.variant
def scaled_dot_product_attention__sqrt_d_k_in_float32(Q, K, V, mask=None):
    # The TensorFlow tutorial's and cs231n's idiom: √d_k of d_k cast to float32.
    d_k = np.float32(Q.shape[-1])
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, weights


@catalog.variant
def scaled_dot_product_attention__masked_fill_float32(Q, K, V, mask=None):
    # PyTorch's scores.masked_fill(mask == 0, -1e9), all in float32: exp(-1e9) is 0.0 there too.
    Q, K, V = (A.astype(np.float32) for A in (Q, K, V))
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(np.float32(Q.shape[-1]))
    if mask is not None:
        scores = np.where(mask == 0, np.float32(-1e9), scores)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return (weights @ V).astype(np.float32), weights.astype(np.float32)


@catalog.variant
def scaled_dot_product_attention__exp_minus_logsumexp(Q, K, V, mask=None):
    # softmax as exp(scores - logsumexp(scores)); exp(-inf - lse) is exactly 0.
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    m = scores.max(axis=-1, keepdims=True)
    logsumexp = m + np.log(np.exp(scores - m).sum(axis=-1, keepdims=True))
    weights = np.exp(scores - logsumexp)
    return weights @ V, weights


# ---------------------------------------------------------------- causal_mask


@catalog.mistake(fails=CAUSAL_MASK_ALL | {MSA_SEED})
def causal_mask__causal_upper_triangle(n):
    return np.triu(np.ones((n, n), dtype=bool))


@catalog.mistake(fails=CAUSAL_MASK_ALL | {MSA_SEED})
def causal_mask__causal_blocks_diagonal(n):
    # <시작> sees nothing: its row is all False and attention gives nan.
    return np.tril(np.ones((n, n), dtype=bool), k=-1)


@catalog.mistake(fails=CAUSAL_MASK_ALL)
def causal_mask__mask_not_bool(n):
    # np.where treats 1.0 as True, so masked_self_attention still works.
    return np.tril(np.ones((n, n)))


@catalog.variant
def causal_mask__index_comparison(n):
    return np.arange(n)[:, None] >= np.arange(n)


# ---------------------------------------------------------------- padding_mask


@catalog.mistake(fails=PADDING_MASK_ALL)
def padding_mask__padding_mask_inverted(token_ids, pad_id=0):
    return (token_ids == pad_id)[None, :]


@catalog.mistake(fails={"padding_mask_pad_ids"})
def padding_mask__padding_ignores_pad_id(token_ids, pad_id=0):
    # Right whenever pad_id is 0, as in the visible example.
    return (token_ids != 0)[None, :]


@catalog.mistake(fails=PADDING_MASK_ALL)
def padding_mask__padding_mask_without_query_axis(token_ids, pad_id=0):
    return token_ids != pad_id


@catalog.mistake(fails=PADDING_MASK_ALL)
def padding_mask__mask_not_bool(token_ids, pad_id=0):
    return (token_ids != pad_id).astype(int).reshape(1, -1)


@catalog.variant
def padding_mask__reshape(token_ids, pad_id=0):
    return (np.asarray(token_ids) != pad_id).reshape(1, -1)


@catalog.variant
def padding_mask__list_comprehension(token_ids, pad_id=0):
    return np.array([[int(t) != pad_id for t in token_ids]], dtype=bool)


# ---------------------------------------------------------------- masked_self_attention


@catalog.mistake(fails=MSA_ALL)
def masked_self_attention__causal_mask_forgotten(X, W_Q, W_K, W_V, W_O, h):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    heads_out, weights = scaled_dot_product_attention(
        split_heads(Q, h), split_heads(K, h), split_heads(V, h)
    )
    return merge_heads(heads_out) @ W_O, weights


@catalog.mistake(fails=MSA_ALL)
def masked_self_attention__forgets_w_o(X, W_Q, W_K, W_V, W_O, h):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    heads_out, weights = scaled_dot_product_attention(
        split_heads(Q, h), split_heads(K, h), split_heads(V, h), mask=causal_mask(len(X))
    )
    return merge_heads(heads_out), weights


@catalog.variant
def masked_self_attention__index_comparison_mask(X, W_Q, W_K, W_V, W_O, h):
    n = X.shape[0]
    future_hidden = np.arange(n)[:, None] >= np.arange(n)
    Qh, Kh, Vh = (split_heads(X @ W, h) for W in (W_Q, W_K, W_V))
    heads_out, weights = scaled_dot_product_attention(Qh, Kh, Vh, future_hidden)
    return merge_heads(heads_out) @ W_O, weights


@catalog.variant
def masked_self_attention__per_head_weight_slices(X, W_Q, W_K, W_V, W_O, h):
    n, d_model = X.shape
    d_head = d_model // h
    outputs, weights = [], []
    for i in range(h):
        cols = slice(i * d_head, (i + 1) * d_head)
        out_i, weights_i = scaled_dot_product_attention(
            X @ W_Q[:, cols], X @ W_K[:, cols], X @ W_V[:, cols], mask=causal_mask(n)
        )
        outputs.append(out_i)
        weights.append(weights_i)
    return np.concatenate(outputs, axis=1) @ W_O, np.stack(weights)


@catalog.variant
def masked_self_attention__float32(X, W_Q, W_K, W_V, W_O, h):
    # Inputs cast to float32 and results returned as float32.
    X, W_Q, W_K, W_V, W_O = (A.astype(np.float32) for A in (X, W_Q, W_K, W_V, W_O))
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    heads_out, weights = scaled_dot_product_attention(
        split_heads(Q, h), split_heads(K, h), split_heads(V, h), mask=causal_mask(X.shape[0])
    )
    output = merge_heads(heads_out) @ W_O
    return output.astype(np.float32), weights.astype(np.float32)


# ---------------------------------------------------------------- multi_head_cross_attention


@catalog.mistake(fails=CROSS_ALL)
def multi_head_cross_attention__kv_from_decoder(X_dec, H_enc, W_Q, W_K, W_V, W_O, h, enc_mask=None):
    Q, K, V = X_dec @ W_Q, X_dec @ W_K, X_dec @ W_V
    mask = None if enc_mask is None else enc_mask[None, None, :]
    heads_out, weights = scaled_dot_product_attention(
        split_heads(Q, h), split_heads(K, h), split_heads(V, h), mask=mask
    )
    return merge_heads(heads_out) @ W_O, weights


@catalog.mistake(fails=CROSS_ALL)
def multi_head_cross_attention__q_from_encoder(X_dec, H_enc, W_Q, W_K, W_V, W_O, h, enc_mask=None):
    Q, K, V = H_enc @ W_Q, X_dec @ W_K, X_dec @ W_V
    mask = None if enc_mask is None else enc_mask[None, None, :]
    heads_out, weights = scaled_dot_product_attention(
        split_heads(Q, h), split_heads(K, h), split_heads(V, h), mask=mask
    )
    return merge_heads(heads_out) @ W_O, weights


@catalog.mistake(fails={"cross_attention_enc_mask", CROSS_SEED})
def multi_head_cross_attention__enc_mask_ignored(
    X_dec, H_enc, W_Q, W_K, W_V, W_O, h, enc_mask=None
):
    Q, K, V = X_dec @ W_Q, H_enc @ W_K, H_enc @ W_V
    heads_out, weights = scaled_dot_product_attention(
        split_heads(Q, h), split_heads(K, h), split_heads(V, h)
    )
    return merge_heads(heads_out) @ W_O, weights


@catalog.mistake(fails=CROSS_ALL)
def multi_head_cross_attention__reads_notebook_globals(
    X_dec, X_enc, W_Q, W_K, W_V, W_O, h, enc_mask=None
):
    # The page's last cell calls the Encoder's output H_enc: keys and values from the
    # notebook's H_enc, not from the argument (named X_enc here). The notebook defines
    # H_enc only after the tests, so every cross-attention cell fails.
    Q, K, V = X_dec @ W_Q, H_enc @ W_K, H_enc @ W_V  # noqa: F821
    mask = None if enc_mask is None else enc_mask[None, None, :]
    heads_out, weights = scaled_dot_product_attention(
        split_heads(Q, h), split_heads(K, h), split_heads(V, h), mask=mask
    )
    return merge_heads(heads_out) @ W_O, weights


@catalog.mistake(fails=CROSS_ALL)
def multi_head_cross_attention__forgets_w_o(X_dec, H_enc, W_Q, W_K, W_V, W_O, h, enc_mask=None):
    Q, K, V = X_dec @ W_Q, H_enc @ W_K, H_enc @ W_V
    mask = None if enc_mask is None else enc_mask[None, None, :]
    heads_out, weights = scaled_dot_product_attention(
        split_heads(Q, h), split_heads(K, h), split_heads(V, h), mask=mask
    )
    return merge_heads(heads_out), weights


@catalog.mistake(fails=CROSS_ALL)
def multi_head_cross_attention__causal_mask_in_cross_attention(
    X_dec, H_enc, W_Q, W_K, W_V, W_O, h, enc_mask=None
):
    # Copied from masked_self_attention: a (n_dec, n_dec) mask on (n_dec, n_enc) scores.
    Q, K, V = X_dec @ W_Q, H_enc @ W_K, H_enc @ W_V
    mask = causal_mask(X_dec.shape[0])
    if enc_mask is not None:
        mask = mask & enc_mask[None, :]
    heads_out, weights = scaled_dot_product_attention(
        split_heads(Q, h), split_heads(K, h), split_heads(V, h), mask=mask
    )
    return merge_heads(heads_out) @ W_O, weights


@catalog.variant
def multi_head_cross_attention__enc_mask_2d(X_dec, H_enc, W_Q, W_K, W_V, W_O, h, enc_mask=None):
    # (1, n_enc) also spreads over (h, n_dec, n_enc).
    Q, K, V = X_dec @ W_Q, H_enc @ W_K, H_enc @ W_V
    mask = None if enc_mask is None else enc_mask[None, :]
    heads_out, weights = scaled_dot_product_attention(
        split_heads(Q, h), split_heads(K, h), split_heads(V, h), mask=mask
    )
    return merge_heads(heads_out) @ W_O, weights


@catalog.variant
def multi_head_cross_attention__enc_mask_reshaped(
    X_dec, H_enc, W_Q, W_K, W_V, W_O, h, enc_mask=None
):
    Q, K, V = X_dec @ W_Q, H_enc @ W_K, H_enc @ W_V
    mask = enc_mask.reshape(1, -1) if enc_mask is not None else None
    heads_out, weights = scaled_dot_product_attention(
        split_heads(Q, h), split_heads(K, h), split_heads(V, h), mask
    )
    return merge_heads(heads_out) @ W_O, weights


@catalog.variant
def multi_head_cross_attention__enc_mask_as_given(
    X_dec, H_enc, W_Q, W_K, W_V, W_O, h, enc_mask=None
):
    # (n_enc,) broadcasts on its own against the last axis.
    Q, K, V = X_dec @ W_Q, H_enc @ W_K, H_enc @ W_V
    heads_out, weights = scaled_dot_product_attention(
        split_heads(Q, h), split_heads(K, h), split_heads(V, h), mask=enc_mask
    )
    return merge_heads(heads_out) @ W_O, weights


@catalog.variant
def multi_head_cross_attention__loop_per_head(X_dec, H_enc, W_Q, W_K, W_V, W_O, h, enc_mask=None):
    d_head = X_dec.shape[1] // h
    outputs, weights = [], []
    for i in range(h):
        cols = slice(i * d_head, (i + 1) * d_head)
        out_i, weights_i = scaled_dot_product_attention(
            X_dec @ W_Q[:, cols], H_enc @ W_K[:, cols], H_enc @ W_V[:, cols], mask=enc_mask
        )
        outputs.append(out_i)
        weights.append(weights_i)
    return np.hstack(outputs) @ W_O, np.stack(weights)


@catalog.variant
def multi_head_cross_attention__float32(X_dec, H_enc, W_Q, W_K, W_V, W_O, h, enc_mask=None):
    # Inputs cast to float32 and results returned as float32.
    X_dec, H_enc, W_Q, W_K, W_V, W_O = (
        A.astype(np.float32) for A in (X_dec, H_enc, W_Q, W_K, W_V, W_O)
    )
    Q, K, V = X_dec @ W_Q, H_enc @ W_K, H_enc @ W_V
    mask = None if enc_mask is None else enc_mask[np.newaxis, np.newaxis, :]
    heads_out, weights = scaled_dot_product_attention(
        split_heads(Q, h), split_heads(K, h), split_heads(V, h), mask=mask
    )
    output = merge_heads(heads_out) @ W_O
    return output.astype(np.float32), weights.astype(np.float32)
