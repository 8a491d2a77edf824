"""The kernel exits (os._exit) while defining merge_heads: earlier cells keep their credit."""

from tests.hostile import FROM_MERGE_HEADS

FUNCTION = "merge_heads"
SOURCE = """
import os

os._exit(1)
"""
ZERO = FROM_MERGE_HEADS
INCIDENT = "KernelDied"
