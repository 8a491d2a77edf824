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

The grader stays bounded whatever the kernel sends: one absolute deadline
covers a whole session (however slowly a reply trickles in), a frame is
capped (`wire`), each blob decodes into one array only, a session takes
at most `SESSION_REPLY_BYTES` from the kernel in all, and a reference helper
the kernel calls back for runs under a memory cap. The socket lives in a
private folder (0700, owned by the grader, under /run or the grader's own
runtime folder, never a shared /tmp), and only the kernel's sandbox may
connect: the peer's uid and pid (SO_PEERCRED) are checked before a byte is
read.
"""

from __future__ import annotations

import builtins
import contextlib
import os
import re
import resource
import secrets
import socket
import stat
import struct
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

from coursekit.core.messages import _
from coursekit.sandbox import leftover_folders
from coursekit.sandbox.inside import code_names, kernel_side, wire

_SOURCE = "\n\n".join(
    Path(module.__file__).read_text(encoding="utf-8") for module in (wire, code_names, kernel_side)
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


# What one session (a test cell) may receive from the kernel in all: the values it
# decodes stay alive while the cell runs, so this bounds the grader's memory.
SESSION_REPLY_BYTES = 128 << 20
# How long a connection that is the sandbox's may take to present its token.
TOKEN_SECONDS = 2.0


# What one reference helper, run on arguments the kernel chose, may allocate: attention
# on a sequence 50 000 long would otherwise want 20 GB of the grader.
HELPER_MEMORY_BYTES = 1 << 30


@contextlib.contextmanager
def helper_memory_cap():
    """Cap this process's data (RLIMIT_DATA) at what it uses now plus HELPER_MEMORY_BYTES.

    A helper called back with huge arguments then raises MemoryError instead
    of taking the machine; the cap is lifted again as soon as it returns.
    """
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
        used = _data_bytes()
    except (OSError, ValueError):
        yield
        return
    cap = used + HELPER_MEMORY_BYTES
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    if soft != resource.RLIM_INFINITY and soft <= cap:
        yield  # already capped tighter
        return
    resource.setrlimit(resource.RLIMIT_DATA, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


def _data_bytes() -> int:
    """This process's data size (VmData), what RLIMIT_DATA counts."""
    with open("/proc/self/status", "rb") as status:
        for line in status:
            if line.startswith(b"VmData:"):
                return int(line.split()[1]) * 1024
    raise ValueError("no VmData")


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


class LearnerObject(wire.Unsupported):
    """A value of the learner's that did not cross the boundary, as the grader shows it."""

    def __repr__(self):
        return _("<{type} object>").format(type=self.type_name)


class Decoder(wire.Decoder):
    """wire's decoder, with the learner's objects shown in the course's language."""

    unsupported = LearnerObject


class Bridge:
    """The listening socket of one kernel; `path` is what the sandbox binds.

    Call `admit(uid, pid)` once the kernel runs: from then on only a process
    of that uid, the sandbox's first process `pid` or one of its
    descendants, gets past `accept`.
    """

    def __init__(self):
        self.folder = leftover_folders.make(private_base())  # a killed grader's are swept
        _check_private(self.folder)
        self.path = os.path.join(self.folder, "bridge.sock")
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.path)
        os.chmod(self.path, 0o600)  # in a folder only we can write: no link to follow
        self.listener.listen(8)
        self.installed = False  # whether the kernel has the bridge module
        self.uid, self.pid = os.geteuid(), None

    def admit(self, uid: int | None, pid: int | None) -> None:
        """Let the sandbox's `uid` connect (through its bind of the socket), and only it."""
        self.uid = os.geteuid() if uid is None else uid
        self.pid = pid
        if self.uid != os.geteuid():
            os.chown(self.path, self.uid, -1, follow_symlinks=False)

    def admit_kernel(self, km) -> None:
        """`admit` the sandbox a kernel manager (`kernel.SandboxMixin`) launched."""
        lease = getattr(km, "_lease", None)  # the uid the sandbox runs as, when graded as root
        self.admit(getattr(lease, "uid", None), getattr(km, "kernel_pid", None))

    def is_sandbox(self, connection: socket.socket) -> bool:
        """Whether the peer is the admitted sandbox, by the kernel's word (SO_PEERCRED)."""
        size = struct.calcsize("3i")
        try:
            pid, uid, _gid = struct.unpack(
                "3i", connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, size)
            )
        except OSError:
            return False
        return uid == self.uid and (self.pid is None or descends_from(pid, self.pid))

    def accept(self, token: str, deadline: float) -> socket.socket | None:
        """The sandbox's connection that presents `token` by `deadline` (others are closed).

        A peer that is not the sandbox is closed before anything is read from
        it; one of the sandbox's that does not present the token in time too.
        """
        expected = token.encode()
        while (left := deadline - time.monotonic()) > 0:
            self.listener.settimeout(left)
            try:
                connection, _address = self.listener.accept()
            except (TimeoutError, OSError):
                continue
            try:
                if self.is_sandbox(connection):
                    until = min(deadline, time.monotonic() + TOKEN_SECONDS)
                    if wire.read_exactly(connection, len(expected), until) == expected:
                        return connection
            except (TimeoutError, OSError, EOFError):
                pass
            connection.close()
        return None

    def close(self) -> None:
        self.listener.close()
        with contextlib.suppress(OSError):
            os.unlink(self.path)
            os.rmdir(self.folder)


def private_base() -> str:
    """A folder only the grader can enter, for the bridges' folders.

    As root /run/coursekit-bridges; otherwise the grader's runtime folder
    ($XDG_RUNTIME_DIR) or ~/.cache. Never a world-writable folder such as
    /tmp, where another account could create the name first.
    """
    if os.geteuid() == 0:
        candidates = ["/run/coursekit-bridges"]
    else:
        runtime = os.environ.get("XDG_RUNTIME_DIR", "")
        candidates = [os.path.join(runtime, "coursekit")] if runtime else []
        candidates.append(os.path.join(os.path.expanduser("~"), ".cache", "coursekit-bridge"))
    for base in candidates:
        if len(base) > 60:  # a Unix socket's path is at most 107 bytes
            continue
        with contextlib.suppress(OSError):
            os.makedirs(os.path.dirname(base), 0o700, exist_ok=True)
            os.mkdir(base, 0o700)
        try:
            _check_private(base)
        except (OSError, BridgeSetupError):
            continue
        return base
    raise BridgeSetupError(
        f"no private folder for the bridge sockets among {candidates}: each must be a "
        "folder (not a link) owned by the grader with mode 0700, in a folder only it or root "
        "can write"
    )


class BridgeSetupError(RuntimeError):
    """The grader found no private place for its bridge sockets."""


def _check_private(folder: str) -> None:
    """Raise unless `folder` is a real folder of ours, 0700, in a folder others cannot write."""
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
        raise BridgeSetupError(f"{folder} is not a folder owned by uid {os.geteuid()}")
    if stat.S_IMODE(info.st_mode) != 0o700:
        raise BridgeSetupError(f"{folder} has mode {oct(stat.S_IMODE(info.st_mode))}, not 0o700")
    parent = os.lstat(os.path.dirname(os.path.abspath(folder)))
    if parent.st_uid not in (0, os.geteuid()) or parent.st_mode & 0o022:
        raise BridgeSetupError(f"another account can write the folder that holds {folder}")


def descends_from(pid: int, ancestor: int) -> bool:
    """Whether process `pid` is `ancestor` or one of its descendants (by /proc's parent links)."""
    for _attempt in range(64):
        if pid == ancestor:
            return True
        if pid <= 1:
            return False
        try:
            with open(f"/proc/{pid}/stat", "rb") as info:
                pid = int(info.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
    return False


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
        self.received = 0  # bytes the kernel has sent in this session

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
        """The kernel's connection for this session (other connections are closed).

        A peer that is not the sandbox is closed before anything is read from
        it; one of the sandbox's that does not present the token in time too.
        """
        connection = self.bridge.accept(token, min(self.deadline, time.monotonic() + 10))
        if connection is not None:
            return connection
        self.bridge.installed = False
        if time.monotonic() >= self.deadline:
            raise CallTimedOut()
        raise BridgeBroken(_("The grader could not reach the answer's functions in the kernel"))

    def _left(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise CallTimedOut()
        return left

    def _exchange(self, header: dict, blobs=()) -> tuple[dict, list[bytes]]:
        connection = self._open()
        try:
            wire.send(connection, header, blobs, self.deadline)
        except TimeoutError:
            self.bridge.installed = False
            raise CallTimedOut() from None
        except OSError as error:
            self.bridge.installed = False
            raise BridgeBroken(f"{type(error).__name__}: {error}") from None
        return self._receive()

    def _receive(self) -> tuple[dict, list[bytes]]:
        """The kernel's next frame, by the session's deadline and within its byte budget."""
        try:
            header, blobs = wire.receive(self.connection, self.deadline)
        except TimeoutError:
            self.bridge.installed = False  # the kernel's half may not be ours any more
            raise CallTimedOut() from None
        except (OSError, EOFError, ValueError, wire.WireError) as error:
            self.bridge.installed = False
            raise BridgeBroken(f"{type(error).__name__}: {error}") from None
        self.received += sum(len(b) for b in blobs)
        if self.received > SESSION_REPLY_BYTES:
            self.bridge.installed = False
            raise BridgeBroken(
                _("The kernel sent over {mib} MiB in one check cell").format(
                    mib=SESSION_REPLY_BYTES >> 20
                )
            )
        return header, blobs

    @contextlib.contextmanager
    def _failing(self):
        """After any failure the kernel's half may not be ours: send its source again next time."""
        try:
            yield
        except (BridgeBroken, CallTimedOut):
            self.bridge.installed = False
            raise

    def describe(self, names: list[str]) -> dict[str, object]:
        """name -> RemoteFunction or plain value, for the names the kernel defines."""
        with self._failing():
            return self._describe(names)

    def _describe(self, names: list[str]) -> dict[str, object]:
        header, blobs = self._exchange({"op": "describe", "names": names})
        described = header.get("info")
        if type(described) is not dict:
            raise BridgeBroken("malformed description")
        found, decoder = {}, Decoder(blobs)
        for name, info in described.items():
            if name not in names or type(info) is not dict:
                continue
            if info.get("kind") in ("function", "callable"):
                found[name] = RemoteFunction(self, name, info)
            elif info.get("kind") == "value":
                found[name] = self._unpack(info.get("value"), decoder)
        return found

    def call(self, name: str, calls: list[tuple], helpers: dict[str, Callable]) -> list[tuple]:
        """[(got, args after the call, error or None)] for each (args, kwargs) in calls."""
        with self._failing():
            return self._call(name, calls, helpers)

    def _call(self, name: str, calls: list[tuple], helpers: dict[str, Callable]) -> list[tuple]:
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
        pairs, decoder = zip(results, calls, strict=True), Decoder(reply_blobs)
        return [self._result(record, decoder, args) for record, (args, _kwargs) in pairs]

    def _result(self, record, decoder, args) -> tuple:
        if type(record) is not dict:
            raise BridgeBroken("malformed result")
        if "error" in record:
            if type(record["error"]) is not dict:
                raise BridgeBroken("malformed error")
            return None, list(args), learner_error(dict(record["error"]))
        got = self._unpack(record.get("ok"), decoder)
        after = self._unpack(record.get("args"), decoder)
        if type(after) is not list or len(after) != len(args):
            after = list(args)
        return got, after, None

    def _answer_callback(self, header, blobs, helpers) -> None:
        name = header.get("name")
        if name not in helpers:  # only the helpers this call asked for
            raise BridgeBroken(f"unexpected callback {str(name)[:40]!r}")
        decoder = Decoder(blobs)
        args = self._unpack(header.get("args"), decoder)
        kwargs = self._unpack(header.get("kwargs"), decoder)
        if type(args) is not list or type(kwargs) is not dict:
            raise BridgeBroken("malformed callback")
        reply_blobs: list[bytes] = []
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings(), helper_memory_cap():
                warnings.simplefilter("ignore")
                reply = {"ok": wire.pack(helpers[name](*args, **kwargs), reply_blobs)}
        except Exception as error:  # MemoryError too: the cap held
            reply, reply_blobs = {"error": {"message": f"{type(error).__name__}: {error}"}}, []
        try:
            wire.send(self.connection, reply, reply_blobs, self.deadline)
        except TimeoutError:
            raise CallTimedOut() from None
        except OSError as error:
            raise BridgeBroken(str(error)) from None

    def _unpack(self, data, decoder: wire.Decoder):
        try:
            return decoder.value(data)
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
        return _("<answer function {name}>").format(name=self.__name__)

    def invoke_many(self, calls: list[tuple]) -> list[tuple]:
        return self.session.call(self.__name__, calls, self.helpers)

    def invoke(self, args: tuple, kwargs: dict) -> tuple:
        return self.invoke_many([(args, kwargs)])[0]

    def __call__(self, *args, **kwargs):
        got, _after, error = self.invoke(args, kwargs)
        if error is not None:
            raise error
        return got

    def with_helpers(self, helpers: dict[str, Callable]) -> RemoteFunction | None:
        if not self.is_function:
            return None
        return RemoteFunction(self.session, self.__name__, self.info, {**self.helpers, **helpers})
