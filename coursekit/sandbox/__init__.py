"""Learner code runs only in a bubblewrap sandbox; verdicts come from outside it.

- `policy`: the bwrap command line (what a sandbox sees, its caps, its uid).
- `kernel.SandboxedKernelManager`: a Jupyter kernel started in that sandbox.
- `warm` / `zygote_main`: as root, a warm, pre-imported parent started inside
  bwrap's sandbox, whose forks narrow it into each kernel's sandbox, instead of
  a new bwrap and Python per kernel.
- `wire`: the plain-data frames that cross the boundary.
- `kernel_side` / `bridge`: the two halves of the channel over which the
  trusted checker calls the learner's functions.
"""
