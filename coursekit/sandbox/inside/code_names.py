"""Which global and attribute names a function's code uses: one walk for both sides.

The trusted checks (coursekit.checks.core) import it. The sandboxed kernel
has no coursekit: bridge.py sends this file's source into it before
kernel_side's, as it does wire.py's, so the kernel gathers a learner
function's names with the same walk. Standard library only.
"""

import types


def code_names(code):
    """Global and attribute names a code object (and the code nested in it) uses."""
    found, stack = set(), [code] if code is not None else []
    while stack:
        current = stack.pop()
        found.update(current.co_names)
        stack.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
    return found
