"""Rebuild a failing hidden-test case for a TA: its inputs and the expected result.

    python -m coursekit.checks.reproduce ch3_multihead 3203
    python -m coursekit.checks.reproduce ch3_multihead 3203 --got got.npz

The seed is the one a failing test's message names. The case's arrays are
printed and, with --save FILE.npz, written for loading in a notebook. With
--got FILE (.npy for one array, .npz for several in return order, e.g.
`np.savez("got.npz", output, weights)`), a learner's result is compared with
the expected one by the hidden checks' own comparison (`core.compare`, whose
tolerance is `core.allclose`), and the same message is printed.
"""

import argparse
from typing import Any

import numpy as np

from coursekit.core.messages import _

from .core import ATOL, RTOL, Case, compare, format_value
from .declared import checks_of


def rebuild(assignment: str, seed: int) -> tuple[Any, Case, Any]:
    """(reference function, case, expected result) of the hidden-test case with this seed."""
    seeded = checks_of(assignment).seeded_cases()
    if seed not in seeded:
        raise KeyError(f"{assignment} has no case with seed {seed}")
    reference, case = seeded[seed]
    return reference, case, reference(*case.args, **case.kwargs)


def tolerance_line(expected: Any) -> str | None:
    """How far a float result may be from `expected` (core.tolerance), in one line."""
    if not isinstance(expected, np.ndarray) or expected.dtype.kind != "f" or not expected.size:
        return None
    largest = float(np.abs(expected).max())
    return _(
        "tolerance: per element |got - expected| <= {atol} + {rtol} × (|expected| + {largest})"
    ).format(atol=f"{ATOL:g}", rtol=f"{RTOL:g}", largest=f"{largest:.4g}")


def load_result(path: str) -> Any:
    """A saved learner result: one array (.npy, or .npz with one array) or a tuple of them."""
    loaded = np.load(path, allow_pickle=False)
    if not isinstance(loaded, np.lib.npyio.NpzFile):
        return loaded
    with loaded:
        arrays = tuple(loaded[name] for name in loaded.files)
    return arrays[0] if len(arrays) == 1 else arrays


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignment", help="e.g. ch3_multihead")
    parser.add_argument("seed", type=int, help="the seed named in the failing test's message")
    parser.add_argument(
        "--save", metavar="FILE.npz", help="also save the inputs and expected result"
    )
    parser.add_argument(
        "--got",
        metavar="FILE",
        help="a learner's result (.npy, or .npz in return order) to compare with the expected one",
    )
    args = parser.parse_args(argv)

    try:
        reference, case, expected = rebuild(args.assignment, args.seed)
    except KeyError as error:
        parser.error(error.args[0])

    print(f"{args.assignment} · {reference.__name__} · {case.describe()}")
    arrays = {}
    for name, value in [*zip(case.arg_names, case.args, strict=True), *case.kwargs.items()]:
        print(f"{name} = {format_value(value)}")
        arrays[name] = value
    results = expected if isinstance(expected, tuple) else (expected,)
    for i, value in enumerate(results):
        print(f"expected[{i}] = {format_value(value)}")
        line = tolerance_line(value)
        if line:
            print(f"        {line}")
        arrays[f"expected_{i}"] = value
    if args.save:
        np.savez(args.save, **{k: np.asarray(v) for k, v in arrays.items() if v is not None})
        print(f"saved {args.save}")
    if args.got:
        mismatch = compare(load_result(args.got), expected)
        if mismatch is None:
            same = _("the same as the expected result (within the tolerance).")
            print(f"{args.got}: {same}")
            return 0
        print(f"{args.got}: {mismatch.problem}")
        if mismatch.expected:
            print("  " + _("expected: {value}").format(value=mismatch.expected))
        if mismatch.got:
            print("  " + _("got: {value}").format(value=mismatch.got))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
