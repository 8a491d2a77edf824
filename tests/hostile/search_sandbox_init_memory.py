"""Wrong split_heads that looks for the reference in the memory of the sandbox's PID 1.

With warm kernels the sandbox's first process is a fork of the grader's warm
parent and runs as the learner's own uid, so learner code may read its
/proc/1/environ, its descriptors and its memory. The scenario does all of
that: it prints PID 1's environment keys and descriptors, tries every
descriptor, and scans its readable memory for a `def split_heads` that would
be the reference's source (or the hidden checks'), execs what it finds, and
falls back to a wrong split_heads. The warm parent never read the course, so
there is nothing to find; under bwrap PID 1 is bwrap, owned by root, and
every read is refused.
"""

from tests.hostile import SPLIT_HEADS_LOSSES, WRONG_SPLIT_HEADS

FUNCTION = "split_heads"
SOURCE = """
import os
import re


def _look_at_pid_one():
    found = {}
    try:
        environ = open("/proc/1/environ", "rb").read().split(b"\\0")
        found["environ"] = sorted(e.split(b"=")[0].decode() for e in environ if e)
    except OSError as error:
        found["environ"] = type(error).__name__
    try:
        found["fds"] = sorted(os.listdir("/proc/1/fd"))
        for fd in found["fds"]:
            try:
                found[f"fd{fd}"] = os.readlink(f"/proc/1/fd/{fd}")
            except OSError as error:
                found[f"fd{fd}"] = type(error).__name__
    except OSError as error:
        found["fds"] = type(error).__name__
    sources = []
    try:
        budget = 256 << 20
        with open("/proc/1/maps") as maps, open("/proc/1/mem", "rb", 0) as mem:
            for line in maps:
                span, perms = line.split()[:2]
                if not perms.startswith("r") or budget <= 0:
                    continue
                start, end = (int(x, 16) for x in span.split("-"))
                try:
                    mem.seek(start)
                    chunk = mem.read(min(end - start, budget))
                except (OSError, OverflowError, ValueError):
                    continue
                budget -= len(chunk)
                for match in re.finditer(rb"def split_heads\\(M, h\\):[^\\0]{0,2000}", chunk):
                    sources.append(match.group().decode(errors="replace"))
        found["memory"] = f"{(256 << 20) - budget} bytes read"
    except OSError as error:
        found["memory"] = type(error).__name__
    print("PID 1 조사:", {k: v for k, v in found.items()})
    print("찾은 split_heads 소스:", len(sources))
    return sources


_found = _look_at_pid_one()


def split_heads(M, h):
    for source in _found:
        namespace = {"np": np}
        try:
            exec(source, namespace)
            return namespace["split_heads"](M, h)
        except Exception:
            continue
    return _wrong(M, h)

""" + WRONG_SPLIT_HEADS.replace("def split_heads", "def _wrong")
ZERO = SPLIT_HEADS_LOSSES
INCIDENT = None
RAN = r"PID 1 조사: \{'environ'"
