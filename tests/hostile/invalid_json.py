"""The submitted notebook is cut off half way: not valid JSON."""

from tests.hostile import FROM_MERGE_HEADS, SPLIT_HEADS_LOSSES

ALL_CELLS = (
    SPLIT_HEADS_LOSSES
    | FROM_MERGE_HEADS
    | {
        "softmax_seed_values",
        "softmax_random_shapes",
        "softmax_large_entries",
        "attention_seed_weights",
        "attention_random_shapes",
        "attention_edge_cases",
    }
)
ZERO = ALL_CELLS
INCIDENT = "InvalidNotebook"


def corrupt(path):
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: len(text) // 2], encoding="utf-8")
