"""The grader's side of the bridge in tests/test_bridge_bounds.py, which its grader
processes import."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from coursekit.sandbox import bridge

# Runs the grader's boot code with a get_ipython() of its own, as the kernel would.
KERNEL = """
import sys, types
planted = sys.argv[1]
if planted:
    module = types.ModuleType("coursekit_bridge")
    exec(compile(planted, "<planted>", "exec"), module.__dict__)
    sys.modules["coursekit_bridge"] = module
namespace = {"split_heads": lambda M, h: M.reshape(M.shape[0], h, -1).transpose(1, 0, 2)}
import numpy as np
def attend(n):
    return helper(np.ones((1, n, 1)), np.ones((1, n, 1)))
namespace["attend"] = attend
shell = types.SimpleNamespace(user_ns=namespace)
code = sys.stdin.read()
exec(code, {"get_ipython": lambda: shell, "__builtins__": __builtins__})
"""


class Client:
    """What a Session needs of a kernel client: `execute` starts the fake kernel on the code.

    It admits the kernel's process to `the_bridge`, as SandboxedExecute admits the sandbox.
    `leak_to`, if given, is a socket that learns the session's token before the kernel runs.
    """

    def __init__(self, planted: str, the_bridge: bridge.Bridge, leak_to=None):
        self.planted, self.bridge, self.leak_to, self.kernel = planted, the_bridge, leak_to, None

    def execute(self, code, **kw):
        if self.leak_to is not None:
            self.leak_to.sendall(re.search(r'"token": \x27(\w+)\x27', code)[1].encode())
        self.kernel = subprocess.Popen(
            [sys.executable, "-c", KERNEL, self.planted], stdin=subprocess.PIPE, text=True
        )
        self.bridge.admit(os.geteuid(), self.kernel.pid)
        self.kernel.stdin.write(code)
        self.kernel.stdin.close()
        return "msg"
