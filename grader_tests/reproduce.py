"""Rebuild a failing hidden-test case for a TA: its inputs and the expected result.

    python -m grader_tests.reproduce ch3_multihead 3203

The seed is the one a failing test's message names. The case's arrays are
printed and, with --save FILE.npz, written for loading in a notebook.
"""

import argparse
import importlib

import numpy as np

from .core import format_value


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignment", help="e.g. ch3_multihead")
    parser.add_argument("seed", type=int, help="the seed named in the failing test's message")
    parser.add_argument(
        "--save", metavar="FILE.npz", help="also save the inputs and expected result"
    )
    args = parser.parse_args(argv)

    module = importlib.import_module(f"grader_tests.{args.assignment}")
    if args.seed not in module.SEEDED_CASES:
        parser.error(f"{args.assignment} has no case with seed {args.seed}")
    reference, case = module.SEEDED_CASES[args.seed]
    expected = reference(*case.args, **case.kwargs)

    print(f"{args.assignment} · {reference.__name__} · {case.describe()}")
    arrays = {}
    for name, value in [*zip(case.arg_names, case.args, strict=True), *case.kwargs.items()]:
        print(f"{name} = {format_value(value)}")
        arrays[name] = value
    results = expected if isinstance(expected, tuple) else (expected,)
    for i, value in enumerate(results):
        print(f"expected[{i}] = {format_value(value)}")
        arrays[f"expected_{i}"] = value
    if args.save:
        np.savez(args.save, **{k: np.asarray(v) for k, v in arrays.items() if v is not None})
        print(f"saved {args.save}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
