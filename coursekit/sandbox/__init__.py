"""Learner code runs only in a bubblewrap sandbox; verdicts come from outside it.

- `policy`: the bwrap command line (what a sandbox sees, its caps, its uid).
- `kernel.SandboxedKernelManager`: a Jupyter kernel started in that sandbox.
- `warm`: as root, a warm, pre-imported parent started inside bwrap's
  sandbox, whose forks narrow it into each kernel's sandbox, instead of a new
  bwrap and Python per kernel.
- `bridge`, `runner_client`: the trusted halves of the channels into a kernel.
- `inside`: the code that runs in the sandbox, sent in as source text.
"""
