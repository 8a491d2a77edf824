"""A correct merge_heads whose cell then writes until the disk is full.

It fills its working folder and /tmp (files of 64 MiB each, until the
write fails) and writes into every file it holds open that lies outside the
sandbox. Its home and /tmp are small tmpfs of the sandbox's own and every
file is capped, so nothing reaches the grading machine's disk: the autograded
folder holds only what was submitted, and the notebook is graded in full.
"""

FUNCTION = "merge_heads"
SOURCE = """
def merge_heads(heads_out):
    h, n, d_head = heads_out.shape
    return heads_out.transpose(1, 0, 2).reshape(n, h * d_head)


import os

CHUNK = b"x" * 2**20


def fill(folder):
    written, index = 0, 0
    while index < 1000:
        try:
            with open(os.path.join(folder, f"fill-{index}.bin"), "wb", buffering=0) as file:
                while True:
                    written += file.write(CHUNK)
        except OSError as error:
            if error.errno != 27:  # EFBIG: this file is at the cap, start another
                return written, error.strerror
        index += 1
    return written, "1000 files"


for folder in (os.getcwd(), "/tmp"):
    written, why = fill(folder)
    print(f"{folder}: {written // 2**20} MiB 쓰고 멈춤 ({why})")

for fd in os.listdir("/proc/self/fd"):
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
        with open(f"/proc/self/fdinfo/{fd}") as info:
            flags = int(info.read().split("flags:")[1].split()[0], 8)
    except (OSError, IndexError, ValueError):
        continue
    if target.startswith("/") and flags & 3 and not os.path.exists(target):
        written = 0
        try:
            while written < 2**30:
                written += os.write(int(fd), CHUNK)
        except OSError as error:
            print(f"fd {fd} ({target}): {written // 2**20} MiB 쓰고 멈춤 ({error.strerror})")
"""
ZERO = frozenset()
INCIDENT = None
RAN = (
    r"/home/learner/ch3_multihead: \d+ MiB 쓰고 멈춤 \(No space left on device\)\s+"
    r"/tmp: \d+ MiB 쓰고 멈춤 \(No space left on device\)"
)
