"""The grader's half of the lean cell runner (`cell_runner`): frames in, bounded and timed.

`connect` waits for the runner's connection on the kernel's bridge socket
(the sandbox's uid and pid by SO_PEERCRED, then the connection file's key),
and holds a pidfd of the runner process (its pid from the same SO_PEERCRED)
to interrupt it with SIGINT and to see it end. `RunnerClient.frames` reads
what the runner sends until a deadline: whatever it sends is untrusted, so a
frame is parsed only within `MAX_FRAME_BYTES` (a longer one is read and
dropped, reported as `Dropped`, so a flooding learner never blocks), a frame
that is not wire.py's JSON header is `RunnerBrokenError`, and the runner's end
(its process gone or the socket closed) is `RunnerEndedError`, after the frames
it sent before are read.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import select
import signal
import socket
import struct
import sys
import time
from pathlib import Path

from coursekit.sandbox.bridge import Bridge, descends_from

SOURCE = Path(__file__).with_name("inside").joinpath("cell_runner.py").read_text(encoding="utf-8")
# The largest frame parsed; a display of a figure is well below. Longer ones are dropped
# unread (the cell's output limit is far smaller anyway).
MAX_FRAME_BYTES = 8 << 20
READ_BYTES = 1 << 20


class RunnerBrokenError(Exception):
    """The runner sent something that is not a frame of the protocol."""


class RunnerEndedError(Exception):
    """The runner's process ended or closed its socket."""


class Dropped:
    """Stands for a frame over MAX_FRAME_BYTES, read and dropped; `size` its length."""

    def __init__(self, size: int):
        self.size = size


def connect(bridge: Bridge, km, token: str, deadline: float) -> RunnerClient:
    """The runner's connection and pidfd, once it has said "ready" (or raise RunnerEndedError)."""
    bridge.admit_kernel(km)  # only this kernel's sandbox may connect
    connection = bridge.accept(token, deadline)
    if connection is None:
        raise RunnerEndedError(f"the cell runner did not connect: {_log(km)}")
    try:
        pid = _peer_pid(connection)
        pidfd = os.pidfd_open(pid)
    except OSError as error:
        connection.close()
        raise RunnerEndedError(f"the cell runner's process: {error}") from None
    kernel_pid = getattr(km, "kernel_pid", None)
    if kernel_pid is not None and not descends_from(pid, kernel_pid):  # a reused pid
        os.close(pidfd)
        connection.close()
        raise RunnerEndedError("the cell runner's process is not the sandbox's")
    client = RunnerClient(connection, pidfd)
    try:
        for frame in client.frames(deadline):
            if isinstance(frame, dict) and frame.get("op") == "ready":
                return client
        raise RunnerEndedError(f"the cell runner did not start in time: {_log(km)}")
    except (RunnerEndedError, RunnerBrokenError):
        client.stop_channels()
        raise


def _log(km) -> str:
    log = getattr(km, "startup_log", None)
    return log() if log else ""


def _peer_pid(connection: socket.socket) -> int:
    size = struct.calcsize("3i")
    pid, _, _ = struct.unpack(
        "3i", connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, size)
    )
    return pid


class RunnerClient:
    """What SandboxedExecute and a bridge Session use of a kernel client, over one socket."""

    def __init__(self, connection: socket.socket, pidfd: int):
        self.connection, self.pidfd = connection, pidfd
        self.buffer = bytearray()
        self.skip = 0  # bytes of a dropped frame still to read
        self.ended = False

    # ------------------------------------------------------------ requests

    def execute(self, code: str, silent: bool = False, **_ignored) -> str:
        """Send an execute request; its id, which the runner's "done" frame names."""
        msg_id = secrets.token_hex(8)
        head = json.dumps({"op": "execute", "id": msg_id, "code": code, "silent": silent})
        data = head.encode()
        try:
            self.connection.settimeout(10)
            self.connection.sendall(struct.pack(">I", len(data)) + data)
        except OSError:
            self.ended = True  # seen as the runner's end by the next read
        return msg_id

    def interrupt(self) -> None:
        if self.pidfd >= 0:
            with contextlib.suppress(ProcessLookupError, OSError):
                signal.pidfd_send_signal(self.pidfd, signal.SIGINT)

    def is_alive(self) -> bool:
        return self.pidfd >= 0 and not select.select([self.pidfd], [], [], 0)[0]

    def stop_channels(self) -> None:
        with contextlib.suppress(OSError):
            self.connection.close()
        if self.pidfd >= 0:
            os.close(self.pidfd)
            self.pidfd = -1

    # ------------------------------------------------------------ frames

    def frames(self, deadline: float | None):
        """The runner's frames as they come (dicts, or `Dropped`), until `deadline` passes.

        Ends (returns) at the deadline with no frame cut: a frame read in part
        stays buffered for the next call. Raises RunnerEndedError or RunnerBrokenError.
        """
        while True:
            while (frame := self._parse()) is not None:
                yield frame
            if self.ended:
                raise RunnerEndedError("the cell runner ended")
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return
            ready, _, _ = select.select([self.connection, self.pidfd], [], [], left)
            if self.connection in ready:
                self._read()
            elif self.pidfd in ready:
                self._read_rest()  # what it sent before it ended
                self.ended = True

    def _read(self) -> None:
        try:
            self.connection.settimeout(0)
            data = self.connection.recv(READ_BYTES)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self.ended = True
            return
        self._take(data)

    def _read_rest(self) -> None:
        with contextlib.suppress(OSError):
            self.connection.settimeout(0)
            while data := self.connection.recv(READ_BYTES):
                self._take(data)

    def _take(self, data: bytes) -> None:
        if self.skip:
            dropped = min(self.skip, len(data))
            self.skip -= dropped
            data = data[dropped:]
        self.buffer += data

    def _parse(self):
        """The next whole frame in the buffer, a Dropped for one too long, or None."""
        if self.skip or len(self.buffer) < 4:
            return None
        (size,) = struct.unpack(">I", self.buffer[:4])
        if size > MAX_FRAME_BYTES:
            have = len(self.buffer) - 4
            del self.buffer[:]
            self.skip = max(0, size - have)
            return Dropped(size)
        if len(self.buffer) < 4 + size:
            return None
        raw = bytes(self.buffer[4 : 4 + size])
        del self.buffer[: 4 + size]
        try:
            header = json.loads(raw)
        except (ValueError, RecursionError) as error:
            raise RunnerBrokenError(f"a frame that is not JSON ({type(error).__name__})") from None
        if type(header) is not dict or header.get("blobs") != []:
            raise RunnerBrokenError("a frame that is not the runner's")
        if type(header.get("op")) is not str:
            raise RunnerBrokenError("a frame that is not the runner's")
        return header

    def kernel_info(self) -> str:
        """nbconvert's first request; answered on the grader's side (`language_info`)."""
        return "kernel_info"


def language_info() -> dict:
    """What ipykernel's kernel_info reply says of the language (the sandbox runs this Python)."""
    return {
        "name": "python",
        "version": sys.version.split()[0],
        "mimetype": "text/x-python",
        "codemirror_mode": {"name": "ipython", "version": sys.version_info[0]},
        "pygments_lexer": f"ipython{sys.version_info[0]}",
        "nbconvert_exporter": "python",
        "file_extension": ".py",
    }


# ---------------------------------------------------------------- frames as messages


def as_message(frame: dict, msg_id: str) -> dict:
    """The Jupyter message nbclient would have got for one of the runner's output frames.

    Its fields are checked (RunnerBrokenError when one is not what the runner sends);
    a MIME bundle keeps only the entries nbformat admits.
    """
    op = frame["op"]
    if op == "stream":
        name, text = frame.get("name"), frame.get("text")
        if name not in ("stdout", "stderr") or type(text) is not str:
            raise RunnerBrokenError("a malformed stream frame")
        return _message("stream", msg_id, name=name, text=text)
    if op in ("display", "result"):
        content = {"data": _bundle(frame.get("data")), "metadata": _mapping(frame.get("metadata"))}
        if op == "result":
            count = frame.get("count")
            content["execution_count"] = count if type(count) is int else None
            return _message("execute_result", msg_id, **content)
        content["transient"] = _mapping(frame.get("transient"))
        kind = "update_display_data" if frame.get("update") is True else "display_data"
        return _message(kind, msg_id, **content)
    if op == "clear":
        return _message("clear_output", msg_id, wait=frame.get("wait") is True)
    if op == "error":
        ename, evalue, traceback = frame.get("ename"), frame.get("evalue"), frame.get("traceback")
        if type(ename) is not str or type(evalue) is not str or type(traceback) is not list:
            raise RunnerBrokenError("a malformed error frame")
        lines = [str(line) for line in traceback]
        return _message("error", msg_id, ename=ename[:200], evalue=evalue, traceback=lines)
    raise RunnerBrokenError(f"an unknown frame {op[:40]!r}")


def _message(kind: str, msg_id: str, **content) -> dict:
    return {
        "msg_type": kind,
        "header": {"msg_type": kind},
        "parent_header": {"msg_id": msg_id},
        "content": content,
    }


def _mapping(value) -> dict:
    if value is None:
        return {}
    if type(value) is not dict:
        raise RunnerBrokenError("a malformed display frame")
    return value


def _bundle(value) -> dict:
    """A MIME bundle: JSON types keep any JSON value, others text (or a list of lines)."""
    bundle = {}
    for mime, data in _mapping(value).items():
        is_json = mime == "application/json" or mime.endswith("+json")
        is_text = type(data) is str or (type(data) is list and all(type(s) is str for s in data))
        if is_json or is_text:
            bundle[mime] = data
    return bundle
