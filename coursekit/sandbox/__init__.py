"""Learner code runs only in a bubblewrap sandbox; verdicts come from outside it.

- `policy`: the bwrap command line (what a sandbox sees, its caps, its uid).
- `kernel.SandboxedKernelManager`: a Jupyter kernel started in that sandbox.
- `wire`: the plain-data frames that cross the boundary.
- `kernel_side` / `bridge`: the two halves of the channel over which the
  trusted checker calls the learner's functions.
"""
