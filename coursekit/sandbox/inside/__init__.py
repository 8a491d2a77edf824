"""The code that runs inside the sandbox, sent in as source text.

Nothing here imports coursekit outside this folder (a test holds it): in
the sandbox there is no coursekit. `zygote_main` is the warm-kernel parent,
`cell_runner` the lean cell runner, `kernel_side` the kernel's half of the
bridge, `wire` the plain-data frames both sides speak, and `code_names` the
one walk of a function's code that both sides share.
"""
