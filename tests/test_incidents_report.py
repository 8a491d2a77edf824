"""reports/grading_incidents.json: grading some learners again keeps the others' entries."""

import json

from coursekit.grading import incidents


def test_regrading_one_learner_keeps_the_others_incidents(tmp_path):
    path = tmp_path / "grading_incidents.json"
    died = {
        "cell": "split_heads_seed",
        "ename": incidents.KERNEL_DIED,
        "reason": "커널이 멈췄습니다",
    }
    stuck = {"cell": "mha_seed_example", "ename": incidents.KERNEL_STUCK, "reason": "멈추지 않아"}
    first = {"ch3_multihead": {"ana": [died], "bo": [stuck]}}
    incidents.write_report(path, first, [("ch3_multihead", "ana"), ("ch3_multihead", "bo")])

    incidents.write_report(path, {}, [("ch3_multihead", "ana")])  # ana fixed her notebook
    assert json.loads(path.read_text(encoding="utf-8")) == {"ch3_multihead": {"bo": [stuck]}}

    incidents.write_report(
        path, {"ch4_cross_attention": {"ana": [died]}}, [("ch4_cross_attention", "ana")]
    )
    report = json.loads(path.read_text(encoding="utf-8"))
    assert report == {"ch3_multihead": {"bo": [stuck]}, "ch4_cross_attention": {"ana": [died]}}
