"""`make grade --slurm` on a real SLURM: Debian's slurmctld and slurmd on this host alone
(tests/slurm_host.py).

The private SLURM itself first: a batch job runs on its one node, and when the
host is torn down no job, job step or daemon of it is left.
"""

from __future__ import annotations

import time

import pytest

from tests.slurm_host import processes_of, slurm_host

pytestmark = pytest.mark.xdist_group("slurm")

# A deadline for a job to run, far beyond the second it takes; not a measurement.
JOB_DEADLINE = 60


def wait_for(condition, seconds: float = JOB_DEADLINE):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        found = condition()
        if found:
            return found
        time.sleep(0.2)
    pytest.fail(f"not within {seconds} s: {condition.__doc__ or condition}")


def test_a_job_runs_on_the_private_slurm_and_nothing_of_it_is_left(tmp_path):
    with slurm_host(tmp_path / "slurm") as host:
        out = tmp_path / "job.out"
        job = host.run("sbatch", "--parsable", f"--output={out}", "--wrap=id -un; sleep 300")
        job = job.strip()

        def running():
            """the job running"""
            return (job, "wrap", "RUNNING") in host.jobs() and out.is_file()

        wait_for(running)
        assert wait_for(lambda: out.read_text().strip()) == "root"
        assert any("slurmstepd" in p for p in processes_of(host.conf))
    assert processes_of(host.conf) == []  # the job cancelled, its step and the daemons gone
