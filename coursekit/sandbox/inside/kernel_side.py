"""The kernel's half of the bridge: serve the trusted checker's calls, then return.

Its source, with wire.py's before it, is sent into the sandboxed kernel as one
silent execute request per test cell (`bridge.Session`); it runs in a
namespace of its own, reads the learner's names from the kernel's user
namespace, and returns when the checker says "done". It holds no secret: the
checker sends only arguments, and whatever comes back is checked on the
trusted side. A helper the checker wants to be the reference inside a
learner function (`helpers`) becomes a stub that calls back across the
bridge, so the reference's code never enters the sandbox.
"""

import contextlib
import io
import socket
import types
import warnings

import numpy as np

# In the sandbox there is no coursekit: wire.py's and code_names.py's sources ran
# just before this one.
with contextlib.suppress(ImportError):
    from coursekit.sandbox.inside.code_names import code_names
    from coursekit.sandbox.inside.wire import pack, receive, send, unpack


def describe(value, blobs):
    if isinstance(value, types.FunctionType):
        return {"kind": "function", "code_names": sorted(code_names(value.__code__))}
    if callable(value):
        return {"kind": "callable", "type": type(value).__name__}
    return {"kind": "value", "value": pack(value, blobs)}


def error_record(error):
    try:
        message = str(error)[:2000]
    except BaseException:
        message = ""
    return {"type": type(error).__name__[:80], "message": message}


def callback_stub(sock, name):
    def stub(*args, **kwargs):
        blobs = []
        request = {"op": "callback", "name": name}
        request.update(args=pack(list(args), blobs), kwargs=pack(kwargs, blobs))
        send(sock, request, blobs)
        header, reply_blobs = receive(sock)
        if "error" in header:
            raise RuntimeError(header["error"].get("message", ""))
        return unpack(header["ok"], reply_blobs)

    stub.__name__ = name
    return stub


def with_stubs(fn, sock, helpers):
    if not helpers:
        return fn
    if not isinstance(fn, types.FunctionType):
        raise TypeError("helpers need a plain function")
    namespace = dict(fn.__globals__)
    namespace.update({name: callback_stub(sock, name) for name in helpers})
    rebound = types.FunctionType(
        fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__
    )
    rebound.__kwdefaults__ = fn.__kwdefaults__
    return rebound


def call_one(fn, args, kwargs, blobs):
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = fn(*args, **kwargs)
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # SystemExit too: it is the learner's answer
        return {"error": error_record(error)}
    mark = len(blobs)
    try:
        record = {"ok": pack(got, blobs), "args": pack(list(args), blobs)}
    except Exception as error:
        del blobs[mark:]
        return {"error": error_record(error)}
    return record


def serve(path, token, user_ns):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    sock.sendall(token.encode())
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            while True:
                header, blobs = receive(sock)
                op = header.get("op")
                if op == "done":
                    return
                reply_blobs = []
                if op == "describe":
                    info = {}
                    for name in header["names"]:
                        if name in user_ns:
                            info[name] = describe(user_ns[name], reply_blobs)
                    send(sock, {"info": info}, reply_blobs)
                elif op == "call":
                    results = []
                    try:
                        fn = with_stubs(user_ns[header["name"]], sock, header.get("helpers"))
                    except BaseException as error:
                        results = [{"error": error_record(error)}] * len(header["calls"])
                    else:
                        for call in header["calls"]:
                            args = unpack(call["args"], blobs)
                            kwargs = unpack(call["kwargs"], blobs)
                            results.append(call_one(fn, args, kwargs, reply_blobs))
                            sink.seek(0)
                            sink.truncate()
                    send(sock, {"results": results}, reply_blobs)
    finally:
        sock.close()
