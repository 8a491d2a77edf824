"""The lean cell runner: IPython's InteractiveShell in the sandbox, one socket to the grader.

It replaces ipykernel on the grading path (`SandboxedExecute.cell_runner =
"lean"`): display formatting, the display hook, `get_ipython()`, magics and
tracebacks are IPython's own, as in Jupyter, but each cell costs one request
frame and a few reply frames instead of ipykernel's signed ZeroMQ messages
(status, execute_input, stream, idle). It runs as `python -c <this source>
CONNECTION_FILE SOCKET` in the same sandbox an ipykernel would (the warm
fork or one bwrap), connects to the bridge's socket (`bridge.Bridge`, whose
SO_PEERCRED check admits only this sandbox) and presents the connection
file's key, as a Session's kernel half presents its token. Self-contained
(the standard library and IPython): there is no coursekit in the sandbox.

Frames are wire.py's: a 4-byte length, then a JSON header (with no blobs).
The grader sends {"op": "execute", "id", "code", "silent"}; the runner
answers with {"op": "stream", "name", "text"}, {"op": "display", "data",
"metadata", "transient", "update"}, {"op": "result", "count", "data",
"metadata"}, {"op": "clear", "wait"}, {"op": "error", "ename", "evalue",
"traceback"}, and at the end {"op": "done", "id", "count", "status", ...}.
A silent request (the bridge's kernel half) sends nothing but "done".
Everything here is the learner's process: the grader trusts none of it.

Interrupts are SIGINT from the grader (it learns this process's pid from the
socket's SO_PEERCRED); they raise KeyboardInterrupt only while a cell runs,
never in the middle of a frame.
"""

import base64
import builtins
import codecs
import datetime
import io
import json
import os
import select
import signal
import socket
import struct
import sys
import threading
import time

# What is sent in one stream frame at most; more waits for the next frame.
STREAM_CHUNK = 1 << 16


class Channel:
    """The socket to the grader; a SIGINT never cuts a frame in two."""

    def __init__(self, path, token):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        for wait in [0.002 * 1.5**n for n in range(30)]:  # ~30 s in all
            try:  # the grader gives the socket to this sandbox's uid once it has started
                self.sock.connect(path)
                break
            except PermissionError:
                time.sleep(wait)
        else:
            self.sock.connect(path)
        self.sock.sendall(token.encode())
        self.in_cell = False  # a SIGINT raises KeyboardInterrupt only then
        self.pending = False  # a SIGINT that came while a frame was being sent
        self.sending = False
        self.lock = threading.Lock()
        signal.signal(signal.SIGINT, self._on_sigint)

    def _on_sigint(self, signum, frame):
        if self.in_cell and not self.sending:
            raise KeyboardInterrupt
        if self.in_cell:
            self.pending = True

    def send(self, header):
        head = json.dumps({**header, "blobs": []}, default=_json_default).encode()
        with self.lock:  # a learner's thread may print while the cell sends its frames
            self.sending = True
            try:
                self.sock.sendall(struct.pack(">I", len(head)) + head)
            finally:
                self.sending = False
        if self.pending and self.in_cell:
            self.pending = False
            raise KeyboardInterrupt

    def receive(self):
        (size,) = struct.unpack(">I", self._exactly(4))
        header = json.loads(self._exactly(size))
        return header if type(header) is dict else {}

    def _exactly(self, size):
        data = bytearray()
        while len(data) < size:
            chunk = self.sock.recv(size - len(data))
            if not chunk:
                raise EOFError("the grader closed the socket")
            data += chunk
        return bytes(data)


def _json_default(value):
    """As jupyter_client's json_default: bytes as base64, dates as ISO text."""
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, datetime.date):
        return value.isoformat()
    try:
        import numbers

        if isinstance(value, numbers.Integral):
            return int(value)
        if isinstance(value, numbers.Real):
            return float(value)
    except Exception:
        pass
    return repr(value)


class Streams:
    """sys.stdout's and sys.stderr's text, each buffered as ipykernel buffers it.

    Both are sent, stdout first, before a display, a result or a traceback
    and at the cell's end, as ipykernel flushes them (it also flushes on a
    timer, which would make outputs depend on timing: not here); a buffer
    is sent on its own when it reaches STREAM_CHUNK.
    """

    def __init__(self, channel):
        self.channel = channel
        self.parts = {"stdout": [], "stderr": []}
        self.size = {"stdout": 0, "stderr": 0}
        self.silent = False
        self.lock = threading.RLock()
        self.capture = None  # FdCapture, once it runs

    def write(self, name, text):
        if self.silent:
            return
        with self.lock:  # a learner's threads may print at once
            self.parts[name].append(text)
            self.size[name] += len(text)
            if self.size[name] >= STREAM_CHUNK:
                self._send(name)

    def flush(self):
        if self.capture is not None:  # what descriptors 1 and 2 got so far goes first
            self.capture.drain()
        with self.lock:
            self._send("stdout")
            self._send("stderr")

    def _send(self, name):
        parts = self.parts[name]
        self.parts[name], self.size[name] = [], 0
        if parts and not self.silent:
            self.channel.send({"op": "stream", "name": name, "text": "".join(parts)})


class FdCapture:
    """What is written to descriptors 1 and 2 (os.write, C code, subprocesses), into `Streams`.

    As ipykernel's capture_fd_output: each is a pipe, read by a thread as it
    fills and drained at the cell's end, before its last stream frames.
    """

    def __init__(self, streams):
        self.streams = streams
        self.lock = threading.Lock()
        self.pipes = {}
        for fd, name in ((1, "stdout"), (2, "stderr")):
            read, write = os.pipe()
            os.dup2(write, fd)
            os.close(write)
            os.set_blocking(read, False)
            self.pipes[read] = (name, codecs.getincrementaldecoder("utf-8")("replace"))
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self):
        while True:
            ready, _, _ = select.select(list(self.pipes), [], [])
            self.drain(ready)

    def drain(self, fds=None):
        with self.lock:
            for fd in fds or list(self.pipes):
                name, decoder = self.pipes[fd]
                while True:
                    try:
                        data = os.read(fd, 1 << 16)
                    except (BlockingIOError, InterruptedError):
                        break
                    if not data:
                        break
                    if text := decoder.decode(data):
                        self.streams.write(name, text)


class OutStream(io.TextIOBase):
    """A text stream that writes into `Streams` under one name (stdout or stderr)."""

    encoding, errors = "UTF-8", "strict"

    def __init__(self, streams, name):
        super().__init__()
        self._streams, self.name = streams, name

    def writable(self):
        return True

    def isatty(self):
        return False

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self._streams.write(self.name, text)
        return len(text)

    def flush(self):
        self._streams.flush()

    def fileno(self):
        raise io.UnsupportedOperation("fileno")


def make_shell(channel, streams):
    from IPython.core.displayhook import DisplayHook
    from IPython.core.displaypub import DisplayPublisher
    from IPython.core.error import StdinNotImplementedError
    from IPython.core.interactiveshell import InteractiveShell

    class LeanDisplayPublisher(DisplayPublisher):
        def publish(self, data, metadata=None, source=None, *, transient=None, update=False, **kw):
            streams.flush()
            channel.send(
                {
                    "op": "display",
                    "data": data,
                    "metadata": metadata or {},
                    "transient": transient or {},
                    "update": bool(update),
                }
            )

        def clear_output(self, wait=False):
            streams.flush()
            channel.send({"op": "clear", "wait": bool(wait)})

    class LeanDisplayHook(DisplayHook):
        """As ipykernel's: the result goes out as one execute_result frame."""

        msg = None

        def start_displayhook(self):
            self.msg = {"op": "result", "data": {}, "metadata": {}}

        def write_output_prompt(self):
            self.msg["count"] = self.prompt_count

        def write_format_data(self, format_dict, md_dict=None):
            self.msg["data"], self.msg["metadata"] = format_dict, md_dict or {}

        def finish_displayhook(self):
            streams.flush()
            msg, self.msg = self.msg, None
            if msg and msg["data"]:
                channel.send(msg)

    class LeanShell(InteractiveShell):
        displayhook_class = LeanDisplayHook
        display_pub_class = LeanDisplayPublisher

        def init_io(self):
            sys.stdout = OutStream(streams, "stdout")
            sys.stderr = OutStream(streams, "stderr")

        def run_cell(self, *args, **kwargs):
            self._last_traceback = None
            self._last_traceback_during_displayhook = False
            return super().run_cell(*args, **kwargs)

        def _showtraceback(self, etype, evalue, stb):
            streams.flush()
            if self.displayhook.msg is not None:
                self._last_traceback_during_displayhook = True
            channel.send(
                {
                    "op": "error",
                    "ename": str(etype.__name__),
                    "evalue": _text(evalue),
                    "traceback": [str(line) for line in stb],
                }
            )
            self._last_traceback = stb

    def no_input(prompt=""):
        raise StdinNotImplementedError(
            "raw_input was called, but this frontend does not support input requests."
        )

    from traitlets.config import Config

    config = Config()
    config.HistoryManager.hist_file = ":memory:"  # as nbgrader's kernels: no history file
    # Tracebacks as Python prints them (each frame's file, line and source line), not
    # IPython's default with context lines: ~0.3 ms each instead of ~12-25 ms (stack_data).
    config.InteractiveShell.xmode = "Plain"
    try:  # ipykernel's code names (/tmp/ipykernel_<pid>/<hash>.py in warnings and frames)
        from ipykernel.compiler import XCachingCompiler as Compiler
    except ImportError:
        from IPython.core.compilerop import CachingCompiler as Compiler
    shell = LeanShell.instance(config=config, compiler_class=Compiler)
    shell.set_hook("show_in_pager", lambda *args, **kwargs: None, 99)  # pages go nowhere
    builtins.input = no_input
    import getpass

    getpass.getpass = no_input
    return shell


def _text(value):
    try:
        return str(value)
    except BaseException:
        return ""


def run(shell, channel, streams, request):
    """One execute request: run the code, send its outputs and then "done"."""
    silent = bool(request.get("silent"))
    streams.silent = silent
    reply = {"op": "done", "id": request.get("id"), "status": "ok"}
    try:
        channel.in_cell = True
        try:
            result = shell.run_cell(
                str(request.get("code", "")), store_history=not silent, silent=silent
            )
        finally:
            channel.in_cell = False
            channel.pending = False
        streams.flush()
        err = result.error_before_exec if result.error_before_exec is not None else None
        err = err if err is not None else result.error_in_exec
        if not result.success or shell._last_traceback_during_displayhook:
            reply.update(
                status="error",
                ename=str(type(err).__name__),
                evalue=_text(err),
                traceback=[str(line) for line in (shell._last_traceback or [])],
            )
    except KeyboardInterrupt:  # between the cell's end and its last frame
        streams.flush()
        reply.update(status="error", ename="KeyboardInterrupt", evalue="", traceback=[])
    finally:
        streams.silent = False
    reply["count"] = shell.execution_count - 1
    channel.send(reply)


def main(connection_file, path):
    with open(connection_file, encoding="utf-8") as info:
        token = json.load(info)["key"]
    if "" not in sys.path:
        sys.path.insert(0, "")  # the working folder, as ipykernel adds it
    if not os.environ.get("MPLBACKEND"):  # as ipykernel: figures are display_data outputs
        os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    channel = Channel(path, token)
    streams = Streams(channel)
    shell = make_shell(channel, streams)
    streams.capture = FdCapture(streams)
    channel.send({"op": "ready"})
    while True:
        try:
            request = channel.receive()
        except KeyboardInterrupt:
            continue
        except EOFError:
            return
        if request.get("op") == "execute":
            run(shell, channel, streams, request)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
