"""Reference solutions for ch4_cross_attention (4장 Cross-Attention: 원문을 흘끗 보기).

Each body below is copied into the solution region of the same function in
source/ch4_cross_attention/cross_attention.ipynb, so a body may use only `np`
and the other ch4 contract functions. In particular there is no `softmax`:
the ch4 notebook does not hand out ch3's answer, so attention writes its
softmax inline.

split_heads and merge_heads are ch3's, imported so that one body serves both.
"""

import numpy as np

from solutions.ch3_multihead import merge_heads, split_heads

# The contract functions, in the order the notebook introduces them.
__all__ = [
    "split_heads",
    "merge_heads",
    "scaled_dot_product_attention",
    "causal_mask",
    "padding_mask",
    "masked_self_attention",
    "multi_head_cross_attention",
]


def scaled_dot_product_attention(Q, K, V, mask=None):
    """softmax(Q Kᵀ / √d_k) V with an optional mask (True = may attend)."""
    d_k = Q.shape[-1]
    # 1) 점수표: (..., n_q, d_k) @ (..., d_k, n_k) → (..., n_q, n_k), √d_k 로 나눈다
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    # 2) 가림판: False 칸은 -inf 로. exp(-inf) = 0 이라 가중치가 정확히 0 이 된다
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    # 3) 행마다 softmax: 가장 큰 값을 빼고 exp, 행의 합으로 나눈다
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    # 4) 비율대로 내용(V)을 섞는다: (..., n_q, n_k) @ (..., n_k, d_v) → (..., n_q, d_v)
    output = weights @ V
    assert output.shape[-2:] == (Q.shape[-2], V.shape[-1])
    return output, weights


def causal_mask(n):
    """bool (n, n): [i, j] is True iff j <= i (a position sees itself and the past)."""
    # 아래 삼각형(대각선 포함)만 True: i 번째 낱말은 0 ~ i 번째만 본다
    return np.tril(np.ones((n, n), dtype=bool))


def padding_mask(token_ids, pad_id=0):
    """bool (1, n_k): True where the token is not pad_id."""
    # 1) 낱말마다 패딩이 아닌지: (n_k,)
    is_token = np.asarray(token_ids) != pad_id
    # 2) 질문 축을 앞에 붙인다: (1, n_k) 는 가중치표 (n_q, n_k) 의 모든 행에 퍼진다
    return is_token[np.newaxis, :]


def masked_self_attention(X, W_Q, W_K, W_V, W_O, h):
    """Multi-head self-attention in which position i sees only positions <= i."""
    n, d_model = X.shape
    # 1) Q, K, V 모두 같은 문장(출력 문장)에서: (n, d_model)
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    # 2) head 마다 나누기: (h, n, d_head)
    Qh, Kh, Vh = split_heads(Q, h), split_heads(K, h), split_heads(V, h)
    # 3) 미래 가림판 (n, n) 을 씌운 Attention: 모든 head 에 같은 가림판이 퍼진다
    heads_out, weights = scaled_dot_product_attention(Qh, Kh, Vh, mask=causal_mask(n))
    # 4) 이어 붙이고 W_O 로 섞기: (n, d_model)
    output = merge_heads(heads_out) @ W_O
    assert output.shape == (n, d_model) and weights.shape == (h, n, n)
    return output, weights


def multi_head_cross_attention(X_dec, H_enc, W_Q, W_K, W_V, W_O, h, enc_mask=None):
    """Multi-head attention with Q from the decoder and K, V from the encoder."""
    n_dec, d_model = X_dec.shape
    n_enc = H_enc.shape[0]
    # 1) 질문(Q)은 번역문(Decoder)에서, 제목표(K)와 내용(V)은 원문(Encoder 출력)에서
    Q = X_dec @ W_Q
    K, V = H_enc @ W_K, H_enc @ W_V
    # 2) head 마다 나누기: Q (h, n_dec, d_head), K·V (h, n_enc, d_head)
    Qh, Kh, Vh = split_heads(Q, h), split_heads(K, h), split_heads(V, h)
    # 3) 원문의 패딩만 가린다 (미래 가림판은 없다): (n_enc,) → (1, 1, n_enc)
    mask = None if enc_mask is None else enc_mask[np.newaxis, np.newaxis, :]
    heads_out, weights = scaled_dot_product_attention(Qh, Kh, Vh, mask=mask)
    # 4) 이어 붙이고 W_O 로 섞기: (n_dec, d_model)
    output = merge_heads(heads_out) @ W_O
    assert output.shape == (n_dec, d_model) and weights.shape == (h, n_dec, n_enc)
    return output, weights
