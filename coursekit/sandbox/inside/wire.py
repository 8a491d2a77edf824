"""Plain data across the sandbox boundary: frames of JSON and .npy bytes.

Both sides use this module: the trusted checker imports it, and the kernel
gets its source (it imports only the standard library and numpy, and knows
nothing of the reference or the checks). Only plain data crosses: None,
bools, ints, floats, short strings, numpy scalars and arrays of numeric or
bool dtype (raw bytes with dtype and shape, never pickle), tuples, lists and str-keyed dicts of
them. Anything else is sent as the name of its type. A frame is a 4-byte
length, a JSON header listing blob lengths, then the blobs; the reader
refuses frames over its caps before reading them, and stops at an absolute
deadline (not a timeout per recv: a reply sent a byte a second would last
days). A `Decoder` admits each blob of a frame once, so the values decoded
from one reply are never larger than the frame itself.
"""

import json
import struct
import time

import numpy as np

MAX_HEADER_BYTES = 1 << 20
MAX_FRAME_BYTES = 64 << 20
MAX_DEPTH = 6
MAX_ITEMS = 10_000
MAX_TEXT = 10_000
ARRAY_KINDS = "biufc"  # bool, ints, floats, complex


class WireError(Exception):
    """A frame or value that breaks the protocol or its caps."""


class Unsupported:
    """Stands for a value of a type that does not cross the boundary. Its repr is English:
    the grader's side decodes into its own subclass, which says it in the course's language."""

    def __init__(self, type_name):
        self.type_name = str(type_name)[:80]

    def __repr__(self):
        return f"<{self.type_name} object>"


# ---------------------------------------------------------------- values


def pack(value, blobs, depth=0):
    """A JSON-able form of `value`; arrays go to `blobs` as .npy bytes."""
    kind = type(value)
    if value is None or kind in (bool, int, float):
        return value
    if kind is str:
        return value[:MAX_TEXT]
    if depth >= MAX_DEPTH:
        return {"t": "object", "type": kind.__name__}
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in ARRAY_KINDS:
            return {"t": "object", "type": f"ndarray({value.dtype})"}
        array = np.ascontiguousarray(value)
        blobs.append(array.tobytes())
        shape = list(array.shape)
        return {"t": "nd", "b": len(blobs) - 1, "dtype": array.dtype.str, "shape": shape}
    if isinstance(value, np.generic) and value.dtype.kind in ARRAY_KINDS:
        return {"t": "np", "dtype": value.dtype.str, "v": value.item()}
    if isinstance(value, tuple | list):
        items = [pack(item, blobs, depth + 1) for item in list(value)[:MAX_ITEMS]]
        return {"t": "tuple" if isinstance(value, tuple) else "list", "v": items}
    if isinstance(value, dict):
        return {
            "t": "dict",
            "v": [[str(k), pack(v, blobs, depth + 1)] for k, v in list(value.items())[:MAX_ITEMS]],
        }
    return {"t": "object", "type": kind.__name__}


def unpack(data, blobs):
    """The value `pack` described, its arrays copies; strict, since the other side may lie."""
    return Decoder(blobs, copy=True).value(data)


class Decoder:
    """Decodes the values of one frame; each blob may back one array only.

    A lying peer could otherwise reference one 16 MiB blob from thousands
    of places and have each decoded as an array of its own.
    """

    unsupported = Unsupported  # what an object that did not cross decodes to

    def __init__(self, blobs, copy=False):
        self.blobs, self.copy = blobs, copy  # without copy, an array keeps its blob's memory
        self.used: set[int] = set()

    def value(self, data, depth=0):
        if data is None or type(data) in (bool, int, float):
            return data
        if type(data) is str:
            return data[:MAX_TEXT]
        if type(data) is not dict or depth > MAX_DEPTH:
            raise WireError("malformed value")
        tag = data.get("t")
        if tag == "nd":
            return self._array(data.get("b"), data.get("dtype"), data.get("shape"))
        if tag == "np":
            dtype = np.dtype(str(data.get("dtype")))
            if dtype.kind not in ARRAY_KINDS or dtype.itemsize > 16:
                raise WireError("scalar dtype")
            return dtype.type(data.get("v"))
        if tag in ("tuple", "list"):
            items = data.get("v")
            if type(items) is not list or len(items) > MAX_ITEMS:
                raise WireError("malformed sequence")
            values = [self.value(item, depth + 1) for item in items]
            return tuple(values) if tag == "tuple" else values
        if tag == "dict":
            pairs = data.get("v")
            if type(pairs) is not list or len(pairs) > MAX_ITEMS:
                raise WireError("malformed dict")
            return {str(k): self.value(v, depth + 1) for k, v in pairs}
        if tag == "object":
            return self.unsupported(data.get("type"))
        raise WireError("unknown tag")

    def _array(self, index, dtype, shape):
        """The blob's bytes as an array; the dtype must be numeric or bool."""
        blobs = self.blobs
        if type(index) is not int or not 0 <= index < len(blobs):
            raise WireError("array reference")
        if index in self.used:
            raise WireError("array blob used twice")
        if type(shape) is not list or not all(type(n) is int and n >= 0 for n in shape):
            raise WireError("array shape")
        try:
            dtype = np.dtype(str(dtype))
        except TypeError:
            raise WireError("array dtype") from None
        if dtype.kind not in ARRAY_KINDS or dtype.hasobject or dtype.itemsize > 16:
            raise WireError("array dtype")
        size = len(blobs[index])
        if len(shape) > 32 or int(np.prod(shape, dtype=np.int64)) * dtype.itemsize != size:
            raise WireError("array size")
        self.used.add(index)
        array = np.frombuffer(blobs[index], dtype=dtype).reshape(shape)
        if self.copy or not array.flags.writeable:  # bytes make a read-only array
            array = array.copy()
        return array


# ---------------------------------------------------------------- frames


def send(sock, header, blobs=(), deadline=None):
    """Send one frame; `deadline` (time.monotonic()) bounds the whole send."""
    blobs = list(blobs)
    head = json.dumps({**header, "blobs": [len(b) for b in blobs]}).encode()
    for data in (struct.pack(">I", len(head)) + head, *blobs):
        _until(sock, deadline)
        sock.sendall(data)


def receive(sock, deadline=None):
    """(header, blobs) of the next frame; WireError when it breaks a cap or ends early.

    With a `deadline` (time.monotonic()), TimeoutError once it has passed,
    however the frame trickles in.
    """
    (size,) = struct.unpack(">I", read_exactly(sock, 4, deadline))
    if size > MAX_HEADER_BYTES:
        raise WireError("header too large")
    try:
        header = json.loads(read_exactly(sock, size, deadline))
    except (ValueError, RecursionError) as error:  # RecursionError: "[[[[…" headers
        raise WireError(f"header: {type(error).__name__}") from None
    lengths = header.get("blobs", []) if type(header) is dict else None
    if type(lengths) is not list or not all(type(n) is int and n >= 0 for n in lengths):
        raise WireError("malformed header")
    if sum(lengths) + size > MAX_FRAME_BYTES:
        raise WireError(f"frame of {sum(lengths) + size} bytes")
    return header, [read_exactly(sock, n, deadline) for n in lengths]


def read_exactly(sock, size, deadline=None):
    """`size` bytes as a bytearray, read in place (no chunks joined: one copy in memory)."""
    buffer = bytearray(size)
    view, got = memoryview(buffer), 0
    while got < size:
        _until(sock, deadline)
        count = sock.recv_into(view[got:], min(size - got, 1 << 20))
        if not count:
            raise EOFError("the other side closed the bridge")
        got += count
    return buffer


def _until(sock, deadline):
    """Give the socket's next operation what is left until `deadline`."""
    if deadline is None:
        return
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("the bridge's deadline has passed")
    sock.settimeout(left)
