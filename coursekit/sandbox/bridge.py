"""The trusted half of the bridge: call a sandboxed kernel's functions as plain data.

`Bridge` owns a listening Unix socket that the kernel's sandbox gets bound
read-only. For each test cell the grader opens a `Session`: it sends the
kernel one silent execute request that runs `kernel_side.serve`, accepts its
connection, and asks for descriptions of names and for calls. Learner
functions appear on the trusted side as `RemoteFunction`s: calling one sends
the arguments and decodes what comes back with `wire.unpack`, which admits
only plain data. The reference and the checks stay in this process; the
kernel only ever sees arguments (and, inside a helper-isolated call, the
results of the helpers it calls back for).
"""

from __future__ import annotations

import builtins
import contextlib
import os
import re
import secrets
import socket
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

from coursekit.sandbox import kernel_side, wire

_SOURCE = "\n\n".join(
    Path(module.__file__).read_text(encoding="utf-8") for module in (wire, kernel_side)
)


# Run in the kernel for each session: the bridge module is made once per kernel,
# in a namespace of its own (nothing is added to the learner's names).
_BOOT = """
import sys, types
module = sys.modules.get("coursekit_bridge")
if not hasattr(module, "serve"):
    module = types.ModuleType("coursekit_bridge")
    exec(compile(source, "<coursekit bridge>", "exec"), module.__dict__)
    sys.modules["coursekit_bridge"] = module
module.serve(path, token, get_ipython().user_ns)
"""


class CallTimedOut(BaseException):
    """The learner's code did not answer within the cell's time limit."""


class BridgeBroken(BaseException):
    """The kernel died, broke the protocol, or never connected."""


class LearnerError(Exception):
    """An exception the learner's function raised in the sandbox, by type name and message."""

    type_name = "Exception"


def learner_error(record: dict) -> Exception:
    """The learner's exception rebuilt on the trusted side (a builtin type where one fits)."""
    name = str(record.get("type", "Exception"))[:80]
    message = str(record.get("message", ""))[:2000]
    cls = getattr(builtins, name, None)
    if isinstance(cls, type) and issubclass(cls, Exception):
        try:
            return cls(message)
        except Exception:
            pass
    safe = re.sub(r"\W", "_", name) or "Exception"
    return type(safe, (LearnerError,), {"type_name": name})(message)


class Bridge:
    """The listening socket of one kernel; `path` is what the sandbox binds."""

    def __init__(self):
        self.folder = tempfile.mkdtemp(prefix="coursekit-bridge-")
        os.chmod(self.folder, 0o711)
        self.path = os.path.join(self.folder, "bridge.sock")
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.path)
        os.chmod(self.path, 0o666)  # the sandbox's uid connects
        self.listener.listen(1)
        self.installed = False  # whether the kernel has the bridge module

    def close(self) -> None:
        self.listener.close()
        with contextlib.suppress(OSError):
            os.unlink(self.path)
            os.rmdir(self.folder)


def silent_execute(client, code: str) -> str:
    """Send code the kernel runs without history, input or output counting; its msg_id."""
    return client.execute(
        code, silent=True, store_history=False, allow_stdin=False, stop_on_error=False
    )


class Session:
    """One test cell's conversation with the kernel, opened on first use.

    `client` is the kernel's Jupyter client (blocking or async): the session
    sends it one silent execute request, whose reply the caller waits for
    after `close()`. `deadline` is a time.monotonic() value: no call may run
    past it. `path` is where the kernel finds the bridge socket.
    """

    def __init__(self, bridge: Bridge, client, deadline: float, path: str):
        self.bridge, self.client, self.deadline, self.path = bridge, client, deadline, path
        self.connection: socket.socket | None = None
        self.msg_id: str | None = None

    def _open(self) -> socket.socket:
        if self.connection is None:
            # The bridge's source goes to the kernel once (parsing it costs ~8 ms);
            # after a failure it goes again, in case learner code removed it.
            source = "" if self.bridge.installed else _SOURCE
            # A learner's thread may connect too: the session's token tells ours apart.
            token = secrets.token_hex(16)
            self.msg_id = silent_execute(
                self.client,
                f'__import__("builtins").exec({_BOOT!r}, {{"source": {source!r}, '
                f'"path": {self.path!r}, "token": {token!r}, "get_ipython": get_ipython}})',
            )
            self.bridge.installed = True
            self.connection = self._accept(token)
        return self.connection

    def _accept(self, token: str) -> socket.socket:
        """The kernel's connection for this session (other connections are closed)."""
        expected = token.encode()
        deadline = min(self.deadline, time.monotonic() + 10)
        while (left := deadline - time.monotonic()) > 0:
            self.bridge.listener.settimeout(left)
            try:
                connection, _ = self.bridge.listener.accept()
                connection.settimeout(max(0.1, deadline - time.monotonic()))
                presented = wire.read_exactly(connection, len(expected))
            except (TimeoutError, OSError, EOFError):
                continue
            if presented == expected:
                return connection
            connection.close()
        self.bridge.installed = False
        if time.monotonic() >= self.deadline:
            raise CallTimedOut()
        raise BridgeBroken("채점기가 커널의 답안 함수에 닿지 못했습니다")

    def _left(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise CallTimedOut()
        return left

    def _exchange(self, header: dict, blobs=()) -> tuple[dict, list[bytes]]:
        connection = self._open()
        try:
            connection.settimeout(self._left())
            wire.send(connection, header, blobs)
            return wire.receive(connection)
        except TimeoutError:
            raise CallTimedOut() from None
        except (OSError, EOFError, ValueError, wire.WireError) as error:
            self.bridge.installed = False
            raise BridgeBroken(f"{type(error).__name__}: {error}") from None

    def _receive(self) -> tuple[dict, list[bytes]]:
        try:
            self.connection.settimeout(self._left())
            return wire.receive(self.connection)
        except TimeoutError:
            raise CallTimedOut() from None
        except (OSError, EOFError, ValueError, wire.WireError) as error:
            raise BridgeBroken(f"{type(error).__name__}: {error}") from None

    def describe(self, names: list[str]) -> dict[str, object]:
        """name -> RemoteFunction or plain value, for the names the kernel defines."""
        header, blobs = self._exchange({"op": "describe", "names": names})
        described = header.get("info")
        if type(described) is not dict:
            raise BridgeBroken("malformed description")
        found = {}
        for name, info in described.items():
            if name not in names or type(info) is not dict:
                continue
            if info.get("kind") in ("function", "callable"):
                found[name] = RemoteFunction(self, name, info)
            elif info.get("kind") == "value":
                found[name] = self._unpack(info.get("value"), blobs)
        return found

    def call(self, name: str, calls: list[tuple], helpers: dict[str, Callable]) -> list[tuple]:
        """[(got, args after the call, error or None)] for each (args, kwargs) in calls."""
        blobs: list[bytes] = []
        packed = [
            {"args": wire.pack(list(args), blobs), "kwargs": wire.pack(dict(kwargs), blobs)}
            for args, kwargs in calls
        ]
        request = {"op": "call", "name": name, "helpers": sorted(helpers), "calls": packed}
        header, reply_blobs = self._exchange(request, blobs)
        while header.get("op") == "callback":
            self._answer_callback(header, reply_blobs, helpers)
            header, reply_blobs = self._receive()
        results = header.get("results")
        if type(results) is not list or len(results) != len(calls):
            raise BridgeBroken("malformed results")
        pairs = zip(results, calls, strict=True)
        return [self._result(record, reply_blobs, args) for record, (args, _) in pairs]

    def _result(self, record, blobs, args) -> tuple:
        if type(record) is not dict:
            raise BridgeBroken("malformed result")
        if "error" in record:
            return None, list(args), learner_error(dict(record["error"]))
        got = self._unpack(record.get("ok"), blobs)
        after = self._unpack(record.get("args"), blobs)
        if type(after) is not list or len(after) != len(args):
            after = list(args)
        return got, after, None

    def _answer_callback(self, header, blobs, helpers) -> None:
        name = header.get("name")
        if name not in helpers:  # only the helpers this call asked for
            raise BridgeBroken(f"unexpected callback {str(name)[:40]!r}")
        args = self._unpack(header.get("args"), blobs)
        kwargs = self._unpack(header.get("kwargs"), blobs)
        reply_blobs: list[bytes] = []
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                reply = {"ok": wire.pack(helpers[name](*args, **kwargs), reply_blobs)}
        except Exception as error:
            reply, reply_blobs = {"error": {"message": f"{type(error).__name__}: {error}"}}, []
        try:
            self.connection.settimeout(self._left())
            wire.send(self.connection, reply, reply_blobs)
        except TimeoutError:
            raise CallTimedOut() from None
        except OSError as error:
            raise BridgeBroken(str(error)) from None

    def _unpack(self, data, blobs):
        try:
            return wire.unpack(data, blobs)
        except (wire.WireError, ValueError, TypeError, OverflowError) as error:
            raise BridgeBroken(f"malformed value: {error}") from None

    def close(self) -> str | None:
        """Tell the kernel to stop serving; the msg_id whose reply ends the request."""
        if self.connection is not None:
            with contextlib.suppress(OSError, TimeoutError):
                self.connection.settimeout(5)
                wire.send(self.connection, {"op": "done"})
            self.connection.close()
            self.connection = None
        return self.msg_id


class RemoteFunction:
    """A learner function living in the sandbox, callable from the trusted side."""

    def __init__(self, session: Session, name: str, info: dict, helpers=None):
        self.session, self.__name__, self.info = session, name, info
        self.helpers: dict[str, Callable] = dict(helpers or {})
        self.is_function = info.get("kind") == "function"
        names = info.get("code_names", [])
        self.code_names = frozenset(str(n) for n in names) if type(names) is list else frozenset()

    def __repr__(self) -> str:
        return f"<답안 함수 {self.__name__}>"

    def invoke_many(self, calls: list[tuple]) -> list[tuple]:
        return self.session.call(self.__name__, calls, self.helpers)

    def invoke(self, args: tuple, kwargs: dict) -> tuple:
        return self.invoke_many([(args, kwargs)])[0]

    def __call__(self, *args, **kwargs):
        got, _, error = self.invoke(args, kwargs)
        if error is not None:
            raise error
        return got

    def with_helpers(self, helpers: dict[str, Callable]) -> RemoteFunction | None:
        if not self.is_function:
            return None
        return RemoteFunction(self.session, self.__name__, self.info, {**self.helpers, **helpers})
