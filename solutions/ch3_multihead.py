"""Reference solutions for ch3_multihead (3장 실습 3, Multi-Head 로 나누고 합치기).

Each body below is copied into the solution region of the same function in
source/ch3_multihead/multihead.ipynb, so a body may use only `np` and the other
contract functions, never a helper of this module.
"""

import numpy as np

# The contract functions, in the order the notebook introduces them.
__all__ = [
    "split_heads",
    "softmax",
    "scaled_dot_product_attention",
    "merge_heads",
    "multi_head_attention",
    "mha_param_count",
]


def softmax(x):
    """Softmax over the last axis, safe for entries up to ±1e4."""
    # 1) 행마다 가장 큰 값을 빼 둔다: exp 가 넘치지 않고, 결과는 그대로다
    shifted = x - x.max(axis=-1, keepdims=True)
    e = np.exp(shifted)
    # 2) 행의 합으로 나눠 행마다 합이 1 이 되게 한다
    return e / e.sum(axis=-1, keepdims=True)


def split_heads(M, h):
    """(n, d_model) -> (h, n, d_head); head i holds columns i*d_head:(i+1)*d_head."""
    n, d_model = M.shape
    assert d_model % h == 0, "d_model 은 h 로 나누어떨어져야 합니다"
    d_head = d_model // h
    # 1) (n, d_model) → (n, h, d_head): 칸을 d_head 칸씩 자른다
    pieces = M.reshape(n, h, d_head)
    # 2) (n, h, d_head) → (h, n, d_head): head 를 맨 앞 축으로 보낸다
    heads = pieces.transpose(1, 0, 2)
    assert heads.shape == (h, n, d_head)
    return heads


def scaled_dot_product_attention(Q, K, V):
    """softmax(Q Kᵀ / √d_k) V over the last two axes; returns (output, weights)."""
    d_k = Q.shape[-1]
    # 1) 점수표: (..., n_q, d_k) @ (..., d_k, n_k) → (..., n_q, n_k), √d_k 로 나눈다
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    assert scores.shape == Q.shape[:-1] + K.shape[-2:-1]
    # 2) 행마다 softmax: 질문 하나가 낱말들을 얼마나 참고할지 정한 가중치표
    weights = softmax(scores)
    # 3) 가중치대로 V 를 섞는다: (..., n_q, n_k) @ (..., n_k, d_v) → (..., n_q, d_v)
    output = weights @ V
    assert output.shape == Q.shape[:-1] + V.shape[-1:]
    return output, weights


def merge_heads(heads_out):
    """(h, n, d_head) -> (n, h * d_head); head i lands in columns i*d_head:(i+1)*d_head."""
    h, n, d_head = heads_out.shape
    # 1) (h, n, d_head) → (n, h, d_head): 낱말을 맨 앞 축으로 되돌린다
    by_word = heads_out.transpose(1, 0, 2)
    # 2) (n, h, d_head) → (n, h * d_head): head 결과를 옆으로 이어 붙인다 (회의록)
    return by_word.reshape(n, h * d_head)


def multi_head_attention(X, W_Q, W_K, W_V, W_O, h):
    """Split into h heads, attend per head, concat, mix with W_O; returns (output, weights)."""
    n, d_model = X.shape
    # 1) Q, K, V 계산: 모두 (n, d_model)
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    # 2) head 마다 조각 나누기: (h, n, d_head)
    Qh, Kh, Vh = split_heads(Q, h), split_heads(K, h), split_heads(V, h)
    # 3) head 마다 Attention: heads_out (h, n, d_head), weights (h, n, n)
    heads_out, weights = scaled_dot_product_attention(Qh, Kh, Vh)
    # 4) 이어 붙이고 (Concat) W_O 로 섞기 (팀장): (n, d_model) @ (d_model, d_model)
    concat = merge_heads(heads_out)
    output = concat @ W_O
    assert output.shape == (n, d_model) and weights.shape == (h, n, n)
    return output, weights


def mha_param_count(d_model, h):
    """Weights in W_Q, W_K, W_V and W_O: 4 * d_model², whatever h is."""
    # 규칙표 네 장, 모두 (d_model, d_model). head 수 h 는 나누는 방법일 뿐 수를 바꾸지 않는다
    return 4 * d_model * d_model
