"""The course's one tolerance (coursekit.checks.core.allclose) and the messages that show it.

The catalog tests prove the rest: every mistake still loses exactly its cells
with its diagnosis, and every correct variant, the float32 ones included,
earns full marks (tests/test_catalog_in_process.py, tests/test_autograde.py).
"""

from __future__ import annotations

import copy
import re

import numpy as np
import pytest

from coursekit.checks import core, reproduce
from coursekit.checks.declared import checks_of
from coursekit.core.course import Course
from grader_tests import ch3_multihead
from tests.support.demo_class import ROOT

SEEDED = [
    pytest.param(seeded, id=f"{assignment}-{seed}")
    for assignment in Course(ROOT).assignments()
    for seed, seeded in checks_of(assignment).seeded_cases().items()
]


def float32_args(args):
    return tuple(
        a.astype(np.float32) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a
        for a in args
    )


def as_float32(result):
    if isinstance(result, tuple):
        return tuple(as_float32(r) for r in result)
    return result.astype(np.float32) if result.dtype.kind == "f" else result


# ---------------------------------------------------------------- the message


def test_message_names_the_element_outside_tolerance_not_the_largest_difference():
    """The largest difference (3e-05 at 1.604) is within tolerance; 2e-05 at 1e-4 is not."""
    expected = np.array([[[0.5, -0.25, 1.604]], [[1.2, 1e-4, -0.75]]])
    got = expected.copy()
    got[0, 0, 2] += 3e-5  # allowed there: 1e-8 + 1e-5 * (1.604 + 1.604) = 3.2e-05
    got[1, 0, 1] += 2e-5  # allowed there: 1e-8 + 1e-5 * (1e-4 + 1.604) = 1.6e-05

    mismatch = core.compare(got, expected, "반환값 output")

    assert mismatch.problem == (
        "반환값 output: 값이 다릅니다 — 6칸 중 1칸이 허용 오차 밖입니다. "
        "가장 크게 벗어난 칸 [1, 0, 1]: 기대 0.0001, 받음 0.00012 "
        "(차이 2e-05, 상대 차이 0.2; 이 칸의 허용 차이 1.61e-05)"
    )
    # The 2-D slices shown below the sentence are the ones that hold that element.
    assert mismatch.expected.startswith("모양 (2, 1, 3) float64, 그중 [1] 조각")
    assert mismatch.got.startswith("모양 (2, 1, 3) float64, 그중 [1] 조각")


def test_the_values_shown_always_read_differently():
    expected = np.array([1.6040001, 2.0])
    got = np.array([1.6040001 + 1e-4, 2.0])
    problem = core.compare(got, expected).problem
    assert "기대 1.604, 받음 1.6041" in problem


def test_an_expected_zero_has_no_relative_difference():
    problem = core.compare(np.array([0.5, 5e-5]), np.array([0.5, 0.0])).problem
    assert "기대 0, 받음 5e-05 (차이 5e-05, 기대가 0 이라 상대 차이 없음" in problem


@pytest.mark.parametrize("seed", range(40))
def test_the_element_shown_is_the_worst_one_outside_tolerance(seed):
    rng = np.random.default_rng(seed)
    expected = rng.normal(size=tuple(rng.integers(1, 6, size=rng.integers(1, 4))))
    expected[rng.random(expected.shape) < 0.3] *= 1e-4  # some elements near zero
    noise = rng.normal(scale=10 ** rng.uniform(-7, -3), size=expected.shape)
    got = expected + noise * (rng.random(expected.shape) < 0.5)
    ratio = core.excess(got, expected)
    mismatch = core.compare(got, expected)
    if np.all(ratio <= 1):
        assert mismatch is None
        return
    match = re.search(
        r"(\d+)칸 중 (\d+)칸이 허용 오차 밖입니다\. 가장 크게 벗어난 칸 \[([\d, ]*)\]",
        mismatch.problem,
    )
    assert match, mismatch.problem
    total, outside, where = int(match[1]), int(match[2]), match[3]
    cited = tuple(int(i) for i in where.split(", ")) if where else ()
    assert (total, outside) == (expected.size, int(np.sum(ratio > 1)))
    assert ratio[cited] > 1, "an element within tolerance is shown as the proof"
    assert ratio[cited] == ratio.max()


# ---------------------------------------------------------------- the policy


@pytest.mark.parametrize("seeded", SEEDED)
def test_a_reference_computed_in_float32_is_right(seeded):
    """Every seeded hidden case: the reference on float32 inputs, returned as float32, passes."""
    reference, case = seeded
    expected = reference(*copy.deepcopy(case.args), **case.kwargs)
    with core.quiet_numpy():
        got = as_float32(reference(*float32_args(copy.deepcopy(case.args)), **case.kwargs))
    assert core.compare(got, expected) is None


def test_attention_with_sqrt_d_k_in_float32_is_right_where_the_old_tolerance_failed():
    """The issue's case: √d_k in float32 differs by ~1e-8, which rtol=1e-6, atol=1e-9 rejected."""
    failed_before = 0
    for case in ch3_multihead.ATTENTION_RANDOM_CASES + ch3_multihead.ATTENTION_EDGE_CASES:
        Q, K, V = case.args
        weights = ch3_multihead.ref.softmax(
            Q @ np.swapaxes(K, -1, -2) / np.sqrt(np.float32(Q.shape[-1]))
        )
        got = (weights @ V, weights)
        expected = ch3_multihead.ref.scaled_dot_product_attention(Q, K, V)
        assert core.compare(got, expected) is None
        failed_before += any(
            not np.allclose(g, e, rtol=1e-6, atol=1e-9) for g, e in zip(got, expected, strict=True)
        )
    assert failed_before, "the example no longer shows what the old tolerance got wrong"


@pytest.mark.parametrize("seed", range(20))
def test_everything_np_allclose_defaults_accept_is_accepted(seed):
    """Visible test cells use np.allclose(rtol=1e-5, atol=1e-8); hidden checks are not stricter."""
    rng = np.random.default_rng(seed)
    expected = rng.normal(size=50) * 10 ** rng.uniform(-9, 2, size=50)
    allowed = 1e-8 + 1e-5 * np.abs(expected)
    got = expected + allowed * rng.uniform(-1, 1, size=50)
    assert np.allclose(got, expected)
    assert core.allclose(got, expected)


def test_allclose_scales_its_absolute_part_with_the_array():
    expected = np.array([100.0, 0.0])
    assert core.allclose([100.0, 9e-4], expected)  # 1e-8 + 1e-5 * 100 = 1e-3 allowed at 0
    assert not core.allclose([100.0, 2e-3], expected)
    assert not np.allclose([100.0, 9e-4], expected)  # numpy's rule has no such part


def test_allclose_needs_the_same_shape_and_real_numbers():
    assert not core.allclose(np.zeros((2, 3)), np.zeros((3, 2)))
    assert not core.allclose(np.zeros(3), np.zeros((1, 3)))  # no broadcasting
    assert not core.allclose(np.zeros(2, dtype=complex), np.zeros(2))
    assert not core.allclose(["a", "b"], np.zeros(2))
    assert not core.allclose(np.array([np.nan]), np.array([0.0]))
    assert not core.allclose(np.array([np.inf]), np.array([1e300]))
    assert core.allclose(np.array([np.inf, 1.0]), np.array([np.inf, 1.0]))


def test_float32_results_are_right_and_integers_are_not():
    expected = np.array([[0.25, 0.75], [0.5, 0.5]])
    assert core.compare(expected.astype(np.float32), expected) is None
    problem = core.compare(np.array([[0, 1], [0, 1]]), expected).problem
    assert problem == "반환값: 실수(float) 배열이어야 하는데 dtype 이 int64 입니다"


# ---------------------------------------------------------------- reproduce


def test_reproduce_compares_a_saved_result_with_the_same_comparison(tmp_path, capsys):
    _, _, (output, weights) = reproduce.rebuild("ch3_multihead", 3300)
    right, wrong = tmp_path / "right.npz", tmp_path / "wrong.npz"
    np.savez(right, output.astype(np.float32), weights.astype(np.float32))
    shifted = output.copy()
    shifted[1, 0, 2] += 1e-3
    np.savez(wrong, shifted, weights)

    assert reproduce.main(["ch3_multihead", "3300", "--got", str(right)]) == 0
    printed = capsys.readouterr().out
    assert "허용 오차: 칸마다 |받음 - 기대| <= 1e-08 + 1e-05 × (|기대| + " in printed
    assert "기대한 결과와 같습니다 (허용 오차 안)" in printed

    assert reproduce.main(["ch3_multihead", "3300", "--got", str(wrong)]) == 1
    printed = capsys.readouterr().out
    assert core.compare((shifted, weights), (output, weights)).problem in printed
    assert "가장 크게 벗어난 칸 [1, 0, 2]" in printed
