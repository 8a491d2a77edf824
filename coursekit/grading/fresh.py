"""The child side of `rerun`: one notebook's cells in a fresh interpreter.

`rerun` starts `serve()` once per grading process as `python -I -c ...`
(isolated: neither the cwd nor PYTHONPATH is on sys.path, so nothing shipped
next to the notebook, such as a fake `grader_tests/`, can be imported). It
imports numpy, pandas and the grader once and forks a child per notebook;
the child snapshots the trusted modules (numpy, builtins, grader_tests,
solutions) *before* any learner code runs, then runs the cells in order:

- setup cells (locked cells the gradebook knows) and the learner's cells run
  in one namespace, as in the kernel;
- before every test cell, and after every call of a learner function, the
  snapshot is restored, so a patched `np.allclose`, `np.testing` or builtin
  does not reach the verdict; values returned by learner functions are
  reduced to plain types first (an ndarray subclass becomes an ndarray);
- visible test cells see the setup cells' own names (`np`, `_seed_example`),
  not what the learner rebound.

Each verdict is written at once as one line `<nonce>{json}` to a results
file opened before learner code runs (fd 0, 1 and 2 go to /dev/null), so a
submission that dies half way keeps the verdicts of the cells before.
"""

from __future__ import annotations

import builtins
import contextlib
import importlib
import json
import os
import resource
import sys
import types

from coursekit.grading.plain import plain

HIDDEN_MARKER = "### BEGIN HIDDEN TESTS"
LEARNER_FILE = "<learner cell>"
_MISSING = object()


class Guard:
    """A snapshot of trusted modules that can be put back at any moment."""

    def __init__(self, modules: list[types.ModuleType]):
        self.modules = [(m, dict(vars(m))) for m in modules]
        self.entries = {name: sys.modules[name] for name in _trusted_names(modules)}
        self.functions = []
        self.classes = []
        for module, saved in self.modules:
            if not module.__name__.startswith(("grader_tests", "solutions")):
                continue
            for value in saved.values():
                if isinstance(value, types.FunctionType):
                    self.functions.append(
                        (value, value.__code__, value.__defaults__, value.__kwdefaults__)
                    )
                elif isinstance(value, type) and value.__module__ == module.__name__:
                    self.classes.append((value, dict(vars(value))))

    def restore(self) -> None:
        for module, saved in self.modules:
            current = vars(module)
            for name, value in saved.items():
                if current.get(name, _MISSING) is not value:
                    current[name] = value
        for name, module in self.entries.items():
            if sys.modules.get(name) is not module:
                sys.modules[name] = module
        for fn, code, defaults, kwdefaults in self.functions:
            if fn.__code__ is not code:
                fn.__code__ = code
            fn.__defaults__, fn.__kwdefaults__ = defaults, kwdefaults
        for cls, saved in self.classes:
            for name, value in saved.items():
                if name not in ("__dict__", "__weakref__") and cls.__dict__.get(name) is not value:
                    type.__setattr__(cls, name, value)

    def wrap(self, fn):
        """fn, but its result is made plain and the snapshot restored after each call."""
        guard = self

        def guarded(*args, **kwargs):
            try:
                result = fn(*args, **kwargs)
            finally:
                guard.restore()
            result = plain(result)
            guard.restore()
            return result

        guarded.__name__ = guarded.__qualname__ = str(getattr(fn, "__name__", "learner"))
        return guarded


def _trusted_names(modules) -> list[str]:
    return [m.__name__ for m in modules if sys.modules.get(m.__name__) is m]


def trusted_modules(assignment: str) -> list[types.ModuleType]:
    import numpy.testing  # noqa: F401 -- imported so that it is snapshotted

    names = ["grader_tests", "grader_tests.core", "solutions"]
    for package in ("grader_tests", "solutions"):
        try:
            importlib.import_module(f"{package}.{assignment}")
            names.append(f"{package}.{assignment}")
        except ImportError:
            pass
    for name in ("copy", "warnings", "contextlib", "types", "math", "json", "builtins"):
        importlib.import_module(name)
        names.append(name)
    names += [n for n in list(sys.modules) if n == "numpy" or n.startswith("numpy.")]
    unique = dict.fromkeys(names)
    return [sys.modules[n] for n in unique if isinstance(sys.modules.get(n), types.ModuleType)]


def guard_hidden_checks(guard: Guard) -> None:
    """Restore the snapshot right after each learner call inside the hidden checks.

    core.run_case calls the learner's function inside `quiet_numpy()`, then
    compares. Patching these two names of the trusted core (before the
    snapshot) puts the restore between the call and the comparison.
    """
    core = importlib.import_module("grader_tests.core")
    quiet, run_case = core.quiet_numpy, core.run_case

    class _Quiet:
        def __init__(self):
            self.inner = quiet()

        def __enter__(self):
            return self.inner.__enter__()

        def __exit__(self, *exc):
            try:
                return self.inner.__exit__(*exc)
            finally:
                guard.restore()

    def guarded_run_case(fn, case):
        evidence = run_case(fn, case)
        guard.restore()
        evidence.got = plain(evidence.got)
        guard.restore()
        return evidence

    core.quiet_numpy, core.run_case = _Quiet, guarded_run_case


def silence() -> None:
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)


def describe(error: BaseException) -> str:
    try:
        return f"{type(error).__name__}: {error}"[:2000]
    except BaseException:
        return type(error).__name__


def run_test(cell, namespace, trusted_names, guard) -> tuple[bool, str]:
    env = dict(namespace)
    env.update(trusted_names)
    env["__builtins__"] = builtins
    if HIDDEN_MARKER not in cell["source"]:
        for name, value in list(env.items()):
            if isinstance(value, types.FunctionType) and value.__code__.co_filename == LEARNER_FILE:
                env[name] = guard.wrap(value)
    guard.restore()
    try:
        exec(compile(cell["source"], f"<test {cell['grade_id']}>", "exec"), env)
    except BaseException as error:  # learner code may raise anything, SystemExit too
        guard.restore()
        return False, describe(error)
    guard.restore()
    return True, ""


def run(request: dict, results) -> None:
    """Run the request's cells, writing each test verdict to `results` at once."""
    nonce, dumps, write, flush = request["nonce"], json.dumps, results.write, results.flush
    modules = trusted_modules(request["assignment"])
    guard = Guard(modules)
    guard_hidden_checks(guard)
    guard = Guard(modules)  # again, so the guarded core is what gets restored
    silence()
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    trusted_names: dict[str, object] = {}
    for cell in request["cells"]:
        if cell["kind"] == "test":
            passed, message = run_test(cell, namespace, trusted_names, guard)
            verdict = {"index": cell["index"], "passed": passed, "message": message}
            write(nonce + dumps(verdict, ensure_ascii=False) + "\n")
            flush()
            continue
        before = dict(namespace) if cell["kind"] == "setup" else None
        filename = f"<setup {cell['index']}>" if before is not None else LEARNER_FILE
        # As in the kernel, an error does not stop the later cells.
        with contextlib.suppress(BaseException):
            exec(compile(cell["source"], filename, "exec"), namespace)
        guard.restore()
        if before is not None:
            trusted_names.update(
                (k, v) for k, v in namespace.items() if before.get(k, _MISSING) is not v
            )
    write(nonce + dumps({"done": True}) + "\n")
    flush()


def preload(names: list[str]) -> None:
    """Import what every run needs, once, before any learner code exists in this process."""
    import pkgutil

    for name in names:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    for package in ("grader_tests", "solutions"):
        module = importlib.import_module(package)
        for info in pkgutil.iter_modules(module.__path__):
            importlib.import_module(f"{package}.{info.name}")


def serve() -> None:
    """A zygote: forks one pristine child per request (one JSON line on stdin).

    Importing numpy, pandas and the grader takes most of a fresh run's time,
    so this process imports them once and never runs learner code itself;
    each child is a copy of it as it was before any learner code ran. For
    each request it answers `pid <n>` when the child starts and `exit <status>`
    when it ends; the caller kills the child's session on timeout.
    """
    preload(sys.argv[1:])
    for line in sys.stdin:
        job = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(job)
        print(f"pid {pid}", flush=True)
        _, status = os.waitpid(pid, 0)
        print(f"exit {status}", flush=True)


def _child(job: dict) -> None:
    try:
        os.setsid()
        cap = job["memory_limit_mb"] * 2**20
        if cap:
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        os.chdir(job["cwd"])
        with open(job["request"], encoding="utf-8") as handle:
            request = json.load(handle)
        results = open(job["results"], "w", encoding="utf-8")  # noqa: SIM115 -- kept open
        run(request, results)
    finally:
        os._exit(0)  # skip interpreter shutdown: learner objects' __del__ must not run


if __name__ == "__main__":
    serve()
