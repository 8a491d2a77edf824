"""bench.slurm_cost's arithmetic and arguments, without SLURM or grading (make bench runs it)."""

from __future__ import annotations

import json

from bench import slurm_cost
from coursekit.cluster.cli import parse_args


def test_the_ways_alternate_so_each_goes_first_as_often():
    firsts = [slurm_cost.order(run)[0] for run in range(1, 5)]
    assert firsts == ["local", "slurm", "local", "slurm"]
    assert all(sorted(slurm_cost.order(run)) == sorted(slurm_cost.WAYS) for run in range(1, 5))


def test_the_cost_is_the_median_difference_per_worker_start_and_per_notebook():
    measured = {
        "local": {"start": [2.0, 3.0, 100.0], "wall": [20.0, 22.0, 21.0], "worker": [8, 9, 10]},
        "slurm": {"start": [10.0, 11.0, 12.0], "wall": [30.0, 31.0, 29.0], "worker": [9, 9, 9]},
    }
    lines = slurm_cost.cost_lines(measured, notebooks=10, jobs=2).splitlines()
    assert "2 workers, 10 notebooks, median of 3 runs (alternated)" in lines[0]

    def numbers(label):
        line = next(line for line in lines if line.strip().startswith(label))
        return [float(x) for x in line.removesuffix(" s").split()[-3:]]

    assert numbers("start of 2 workers") == [3.0, 11.0, 8.0]  # medians: the 100 s run is out
    assert numbers("per worker start") == [1.5, 5.5, 4.0]
    assert numbers("make grade, per notebook") == [2.1, 3.0, 0.9]
    assert numbers("without the workers' start") == [1.8, 1.9, 0.1]
    assert numbers("a worker's grading") == [0.9, 0.9, 0.0]


def test_the_grading_seconds_come_from_make_grades_stats(tmp_path):
    stats = tmp_path / "stats.json"
    workers = {"tcp://a": {"results": 3, "seconds": 4.5}, "tcp://b": {"results": 1, "seconds": 1}}
    stats.write_text(json.dumps({"workers": workers, "skipped": 0}))
    assert slurm_cost.worker_seconds(stats) == 5.5


def test_both_ways_are_make_grade_command_lines(tmp_path):
    stats = tmp_path / "stats.json"
    local = parse_args(slurm_cost.grade_args("local", 3, "grading", stats))
    assert local.jobs == 3 and not local.slurm and local.stats == stats and local.quiet
    on_slurm = parse_args(slurm_cost.grade_args("slurm", 3, "grading", stats))
    assert on_slurm.slurm and on_slurm.slurm_jobs == 3 and on_slurm.slurm_partition == "grading"
    assert on_slurm.stats == stats
