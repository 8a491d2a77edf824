"""An endless loop that ignores the interrupt nbclient sends on timeout."""

from tests.hostile import FROM_MERGE_HEADS

FUNCTION = "merge_heads"
SOURCE = """
import signal

signal.signal(signal.SIGINT, signal.SIG_IGN)
while True:
    pass
"""
ZERO = FROM_MERGE_HEADS
INCIDENT = "KernelStuck"
