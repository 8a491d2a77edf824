"""Known mistakes and correct variants for ch3_multihead, written as a learner would.

Each entry replaces one answer cell in an otherwise correct notebook. In the
notebook the functions call each other (multi_head_attention calls the
learner's split_heads, attention calls the learner's softmax), so a helper's
mistake that changes the seeded example also costs the VISIBLE cells of its
callers (attention_seed_weights, mha_seed_example). The callers' hidden cells
isolate the helper and do not fail for it.

Lines that read notebook globals on purpose carry `# noqa: F821`.
"""

import numpy as np

from catalog import Catalog, UnknownMistake

# In the notebook these names are the learner's own answers (or the reference's);
# imported here so that each entry also runs on its own.
from solutions.ch3_multihead import (
    merge_heads,
    scaled_dot_product_attention,
    softmax,
    split_heads,
)

catalog = Catalog(
    "ch3_multihead",
    page_outputs=(
        "X: (4, 8)  Q, K, V: (4, 8) (4, 8) (4, 8)",
        "head 수: 2  head 하나의 폭: 4",
        "나눈 Q: (2, 4, 4)",
        "head 0 이 받은 '나는' 의 Q: [-1.19 -2.72 -0.72  2.36]",
        "Q 의 '나는' 앞 4칸     : [-1.19 -2.72 -0.72  2.36]",
        "나는   0.13  0.04  0.57  0.26",
        "나는   0.05  0.89  0.03  0.03",
        "가장 많이 참고: {'나는': '버스로', '학교에': '학교에', "
        "'버스로': '학교에', '갔다': '학교에'}",
        "head 출력: (2, 4, 4) → Concat: (4, 8) → W_O 뒤: (4, 8)",
        "Multi-Head 가중치 수: 256",
    ),
    # Biases counted too: a mistake the catalog does not name.
    unknown_mistake=UnknownMistake(
        "mha_param_count",
        (
            "def mha_param_count(d_model, h):\n    return 4 * d_model * d_model + 4 * d_model\n",
            "def mha_param_count(d_model, h):\n"
            "    weights = d_model * d_model\n"
            "    biases = d_model\n"
            "    return 4 * (weights + biases)\n",
        ),
    ),
    reads_live_globals=frozenset(
        {
            "split_heads__reads_notebook_globals",
            "merge_heads__reads_notebook_globals",
            "scaled_dot_product_attention__scaled_by_sqrt_d_model",
        }
    ),
)

# Visible cells of the composite functions, on the seeded example: attention
# (which calls softmax) and multi-head attention (which calls all the helpers).
ATTENTION_SEED = "attention_seed_weights"
MHA_SEED = "mha_seed_example"

# Every graded cell of one function.
SOFTMAX_ALL = {"softmax_seed_values", "softmax_random_shapes", "softmax_large_entries"}
SPLIT_HEADS_ALL = {"split_heads_seed", "split_heads_random_shapes", "split_heads_edge_cases"}
ATTENTION_ALL = {ATTENTION_SEED, "attention_random_shapes", "attention_edge_cases"}
MERGE_HEADS_ALL = {"merge_heads_seed", "merge_heads_random_shapes"}
MHA_ALL = {MHA_SEED, "mha_random_shapes", "mha_edge_cases"}
PARAM_COUNT_ALL = {"param_count_seed", "param_count_other_sizes"}

# ---------------------------------------------------------------- softmax


@catalog.mistake(fails=SOFTMAX_ALL | {ATTENTION_SEED, MHA_SEED})
def softmax__softmax_wrong_axis(x):
    # 1-D passes (axis 0 is the last axis); rows of the (2, 3) example do not sum to 1.
    e = np.exp(x - x.max(axis=0, keepdims=True))
    return e / e.sum(axis=0, keepdims=True)


@catalog.mistake(fails=SOFTMAX_ALL | {ATTENTION_SEED, MHA_SEED})
def softmax__softmax_whole_array(x):
    e = np.exp(x - x.max())
    return e / e.sum()


@catalog.mistake(fails={"softmax_large_entries"})
def softmax__softmax_no_max_shift(x):
    # Right for the seed's small scores; only ±1e4 overflows.
    e = np.exp(x)
    return e / e.sum(axis=-1, keepdims=True)


@catalog.mistake(fails={"softmax_random_shapes", "softmax_large_entries"})
def softmax__modifies_input(x):
    # The visible cell passes fresh float arrays it never reads again; attention passes its
    # temporary scores. Only the hidden checks, which compare the input after the call, see it.
    x -= x.max(axis=-1, keepdims=True)
    e = np.exp(x)
    return e / e.sum(axis=-1, keepdims=True)


@catalog.mistake(fails=SOFTMAX_ALL | {ATTENTION_SEED, MHA_SEED})
def softmax__softmax_missing_keepdims(x):
    # (2, 3) / (2,) and (2, 4, 4) / (2, 4) cannot broadcast.
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1)


@catalog.variant
def softmax__log_sum_exp(x):
    m = x.max(axis=-1, keepdims=True)
    log_sum = m + np.log(np.exp(x - m).sum(axis=-1, keepdims=True))
    return np.exp(x - log_sum)


@catalog.variant
def softmax__float32(x):
    # Deep-learning code keeps activations in float32: the result is float32 too.
    x = np.asarray(x, dtype=np.float32)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@catalog.variant
def softmax__exp_minus_logsumexp_float32(x):
    # scipy.special.softmax's form, exp(x - logsumexp(x)), in float32.
    def logsumexp(a):
        m = a.max(axis=-1, keepdims=True)
        return m + np.log(np.exp(a - m).sum(axis=-1, keepdims=True))

    x = x.astype(np.float32)
    return np.exp(x - logsumexp(x))


# ---------------------------------------------------------------- split_heads


@catalog.mistake(fails=SPLIT_HEADS_ALL | {MHA_SEED})
def split_heads__reshape_without_transpose(M, h):
    n, d_model = M.shape
    return M.reshape(h, n, d_model // h)


@catalog.mistake(fails={"split_heads_seed", "split_heads_random_shapes", MHA_SEED})
def split_heads__interleaved_head_columns(M, h):
    # With h = 1 or h = d_model every head gets the same columns either way: edge cases pass.
    n, d_model = M.shape
    return M.reshape(n, d_model // h, h).transpose(2, 0, 1)


@catalog.mistake(fails=SPLIT_HEADS_ALL | {MHA_SEED})
def split_heads__split_wrong_axis_order(M, h):
    # At the seed n == d_head, so the shape (2, 4, 4) is right and only the values are not.
    n, d_model = M.shape
    return M.reshape(n, h, d_model // h).transpose(1, 2, 0)


@catalog.mistake(fails={"split_heads_random_shapes", "split_heads_edge_cases"})
def split_heads__reads_notebook_globals(M, h):
    # The course page's body, which reads the notebook's n and d_head: right only at the seed.
    return M.reshape(n, h, d_head).transpose(1, 0, 2)  # noqa: F821


@catalog.mistake(fails={"split_heads_random_shapes", "split_heads_edge_cases"})
def split_heads__hard_coded_seed_shape(M, h):
    return M.reshape(4, 2, 4).transpose(1, 0, 2)


@catalog.variant
def split_heads__split_and_stack(M, h):
    return np.stack(np.split(M, h, axis=1))


# ---------------------------------------------------------------- attention


@catalog.mistake(fails=ATTENTION_ALL | {MHA_SEED})
def scaled_dot_product_attention__no_scaling(Q, K, V):
    weights = softmax(Q @ np.swapaxes(K, -1, -2))
    return weights @ V, weights


@catalog.mistake(fails=ATTENTION_ALL | {MHA_SEED})
def scaled_dot_product_attention__scaled_by_d_k(Q, K, V):
    d_k = Q.shape[-1]
    weights = softmax(Q @ np.swapaxes(K, -1, -2) / d_k)
    return weights @ V, weights


@catalog.mistake(fails=ATTENTION_ALL | {MHA_SEED})
def scaled_dot_product_attention__scaled_by_sqrt_d_model(Q, K, V):
    # √8 instead of √4 at the seed: 나는's row becomes 0.17 0.07 0.48 0.28.
    weights = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_model))  # noqa: F821
    return weights @ V, weights


@catalog.mistake(fails=ATTENTION_ALL | {MHA_SEED})
def scaled_dot_product_attention__k_transpose_on_stacked_heads(Q, K, V):
    # Right for 2-D inputs only; (2, 4, 4) @ K.T raises at the seed.
    weights = softmax(Q @ K.T / np.sqrt(Q.shape[-1]))
    return weights @ V, weights


@catalog.mistake(fails=ATTENTION_ALL | {MHA_SEED})
def scaled_dot_product_attention__weights_times_k(Q, K, V):
    weights = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))
    return weights @ K, weights


@catalog.mistake(fails=ATTENTION_ALL | {MHA_SEED})
def scaled_dot_product_attention__output_weights_swapped(Q, K, V):
    weights = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))
    return weights, weights @ V


@catalog.mistake(fails=ATTENTION_ALL | {MHA_SEED})
def scaled_dot_product_attention__attention_softmax_wrong_axis(Q, K, V):
    # Normalises each column (over the queries) instead of each row.
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    e = np.exp(scores - scores.max(axis=-2, keepdims=True))
    weights = e / e.sum(axis=-2, keepdims=True)
    return weights @ V, weights


@catalog.variant
def scaled_dot_product_attention__einsum(Q, K, V):
    scores = np.einsum("...qd,...kd->...qk", Q, K) / np.sqrt(Q.shape[-1])
    weights = softmax(scores)
    return np.einsum("...qk,...kv->...qv", weights, V), weights


@catalog.variant
def scaled_dot_product_attention__loop_per_head(Q, K, V):
    # One 2-D attention per index of the leading axes (none, (h,), or (2, 3)).
    lead = Q.shape[:-2]
    output = np.empty(Q.shape[:-1] + V.shape[-1:])
    weights = np.empty(Q.shape[:-1] + K.shape[-2:-1])
    for i in np.ndindex(lead):
        weights[i] = softmax(Q[i] @ K[i].T / np.sqrt(Q.shape[-1]))
        output[i] = weights[i] @ V[i]
    return output, weights


@catalog.variant
def scaled_dot_product_attention__q_scaled_first(Q, K, V):
    Q_scaled = Q / np.sqrt(Q.shape[-1])
    weights = softmax(Q_scaled @ np.swapaxes(K, -1, -2))
    return weights @ V, weights


@catalog.variant
def scaled_dot_product_attention__swapaxes_method(Q, K, V):
    weights = softmax(Q @ K.swapaxes(-1, -2) / np.sqrt(Q.shape[-1]))
    return weights @ V, weights


@catalog.variant
def scaled_dot_product_attention__sqrt_d_k_in_float32(Q, K, V):
    # The TensorFlow tutorial's and cs231n's idiom: √d_k of d_k cast to float32.
    d_k = np.float32(Q.shape[-1])
    weights = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k))
    return weights @ V, weights


@catalog.variant
def scaled_dot_product_attention__float32(Q, K, V):
    # Inputs cast to float32 and results returned as float32.
    Q, K, V = (A.astype(np.float32) for A in (Q, K, V))
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(np.float32(Q.shape[-1]))
    weights = softmax(scores).astype(np.float32)
    return (weights @ V).astype(np.float32), weights


# ---------------------------------------------------------------- merge_heads


@catalog.mistake(fails=MERGE_HEADS_ALL | {MHA_SEED})
def merge_heads__merge_without_transpose(heads_out):
    h, n, d_head = heads_out.shape
    return heads_out.reshape(n, h * d_head)


@catalog.mistake(fails=MERGE_HEADS_ALL | {MHA_SEED})
def merge_heads__merge_interleaved(heads_out):
    h, n, d_head = heads_out.shape
    return heads_out.transpose(1, 2, 0).reshape(n, h * d_head)


@catalog.mistake(fails=MERGE_HEADS_ALL | {MHA_SEED})
def merge_heads__merge_stacked_rows(heads_out):
    # (8, 4) at the seed, so `concat @ W_O` raises inside multi_head_attention.
    return np.vstack(heads_out)


@catalog.mistake(fails={"merge_heads_random_shapes"})
def merge_heads__reads_notebook_globals(heads_out):
    return heads_out.transpose(1, 0, 2).reshape(n, d_model)  # noqa: F821


@catalog.mistake(fails={"merge_heads_random_shapes"})
def merge_heads__hard_coded_seed_shape(heads_out):
    return heads_out.transpose(1, 0, 2).reshape(4, 8)


@catalog.variant
def merge_heads__hstack(heads_out):
    return np.hstack(heads_out)


@catalog.variant
def merge_heads__concatenate(heads_out):
    return np.concatenate(list(heads_out), axis=-1)


# ---------------------------------------------------------------- multi_head_attention


@catalog.mistake(fails=MHA_ALL)
def multi_head_attention__forgets_w_o(X, W_Q, W_K, W_V, W_O, h):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    heads_out, weights = scaled_dot_product_attention(
        split_heads(Q, h), split_heads(K, h), split_heads(V, h)
    )
    return merge_heads(heads_out), weights


@catalog.mistake(fails=MHA_ALL)
def multi_head_attention__w_o_transposed(X, W_Q, W_K, W_V, W_O, h):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    heads_out, weights = scaled_dot_product_attention(
        split_heads(Q, h), split_heads(K, h), split_heads(V, h)
    )
    return merge_heads(heads_out) @ W_O.T, weights


@catalog.mistake(fails=MHA_ALL)
def multi_head_attention__projections_transposed(X, W_Q, W_K, W_V, W_O, h):
    # W @ x for a column vector x, written as X @ W.T for every projection.
    Q, K, V = X @ W_Q.T, X @ W_K.T, X @ W_V.T
    heads_out, weights = scaled_dot_product_attention(
        split_heads(Q, h), split_heads(K, h), split_heads(V, h)
    )
    return merge_heads(heads_out) @ W_O.T, weights


@catalog.mistake(fails=MHA_ALL)
def multi_head_attention__single_head(X, W_Q, W_K, W_V, W_O, h):
    # Weights (n, n) instead of (h, n, n), even with h = 1.
    output, weights = scaled_dot_product_attention(X @ W_Q, X @ W_K, X @ W_V)
    return output @ W_O, weights


@catalog.variant
def multi_head_attention__per_head_weight_slices(X, W_Q, W_K, W_V, W_O, h):
    # Each head's own columns of W_Q, W_K, W_V, as in the slides' "a W per head".
    d_head = X.shape[1] // h
    outputs, weights = [], []
    for i in range(h):
        cols = slice(i * d_head, (i + 1) * d_head)
        out_i, weights_i = scaled_dot_product_attention(
            X @ W_Q[:, cols], X @ W_K[:, cols], X @ W_V[:, cols]
        )
        outputs.append(out_i)
        weights.append(weights_i)
    return np.concatenate(outputs, axis=1) @ W_O, np.stack(weights)


@catalog.variant
def multi_head_attention__float32(X, W_Q, W_K, W_V, W_O, h):
    # Inputs cast to float32 and results returned as float32.
    X, W_Q, W_K, W_V, W_O = (A.astype(np.float32) for A in (X, W_Q, W_K, W_V, W_O))
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    heads_out, weights = scaled_dot_product_attention(
        split_heads(Q, h), split_heads(K, h), split_heads(V, h)
    )
    output = merge_heads(heads_out) @ W_O
    return output.astype(np.float32), weights.astype(np.float32)


# ---------------------------------------------------------------- mha_param_count


@catalog.mistake(fails=PARAM_COUNT_ALL)
def mha_param_count__param_count_divided_by_h(d_model, h):
    return 4 * d_model * d_model // h


@catalog.mistake(fails=PARAM_COUNT_ALL)
def mha_param_count__param_count_times_h(d_model, h):
    return 4 * d_model * d_model * h


@catalog.mistake(fails=PARAM_COUNT_ALL)
def mha_param_count__param_count_without_w_o(d_model, h):
    return 3 * d_model * d_model


@catalog.mistake(fails={"param_count_other_sizes"})
def mha_param_count__param_count_hard_coded(d_model, h):
    return 256


@catalog.variant
def mha_param_count__sum_of_four_weight_sizes(d_model, h):
    return sum(d_model * d_model for _ in ("W_Q", "W_K", "W_V", "W_O"))
