"""A private single-host SLURM for tests, from Debian's packages (`make slurm`).

`slurm_host(folder)` writes a munge key and a slurm.conf into `folder`, starts
`munged`, `slurmctld` and `slurmd` in the foreground with every socket, pid
file, log, spool and state folder in it, all on 127.0.0.1 and free ports,
points SLURM_CONF at that slurm.conf (the client commands and dask-jobqueue
read it), and yields once `sinfo` says this host's node is idle. On exit every
job is cancelled and waited for, then the daemons are stopped.

One host, as dask-jobqueue's own CI runs it: `proctrack/linuxproc`,
`task/none`, no accounting, `select/cons_tres` with CPUs as the consumable,
SlurmUser root (slurmd runs jobs as their owner, so it needs root anyway).
Tests skip with a plain reason only where SLURM cannot be installed or run
(not root); a SLURM that is installed but does not start is a failure, with
its logs.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parents[2]  # the Makefile's folder
COMMANDS = ("munged", "mungekey", "slurmctld", "slurmd", "sinfo", "sbatch", "squeue", "scancel")
PARTITION = "grading"
# Far beyond the 1.2-1.4 s the node takes to be idle here; a deadline, not a measurement.
START_DEADLINE = 60
STOP_DEADLINE = 60


@dataclass
class SlurmHost:
    folder: Path
    conf: Path
    node: str
    partition: str
    cpus: int

    @property
    def env(self) -> dict[str, str]:
        """The environment the client commands (and dask-jobqueue's) need."""
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def run(self, *command: str, check: bool = True) -> str:
        done = subprocess.run(
            list(command), env=self.env, capture_output=True, text=True, timeout=60
        )
        if check and done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)}: {done.returncode} {done.stderr.strip()}")
        return done.stdout

    def jobs(self) -> list[tuple[str, str, str]]:
        """Every job SLURM still knows of: (id, name, state)."""
        out = self.run("squeue", "--noheader", "--format=%i|%j|%T")
        return [tuple(line.split("|")) for line in out.splitlines() if line.strip()]

    def node_state(self) -> str:
        return self.run("sinfo", "--noheader", "--Node", "--format=%T", check=False).strip()

    def cancel_all(self) -> None:
        self.run("scancel", "--full", f"--user={os.geteuid()}", check=False)


def install() -> None:
    """SLURM's and munge's commands, installed like `make slurm` when missing; skip
    with the reason where that cannot be done."""
    if all(shutil.which(c) for c in COMMANDS):
        return
    if os.geteuid() != 0:
        pytest.skip("SLURM is not installed and installing it (make slurm) needs root")
    done = subprocess.run(
        ["make", "-C", str(ROOT), "--no-print-directory", "slurm"], capture_output=True, text=True
    )
    missing = [c for c in COMMANDS if not shutil.which(c)]
    if done.returncode != 0 or missing:
        pytest.skip(f"SLURM could not be installed (make slurm): {done.stderr.strip()[-500:]}")


def slurm_conf(folder: Path, node: str, cpus: int, munge_socket: Path) -> str:
    ctld, slurmd = free_port(), free_port()
    return "\n".join(
        [
            "ClusterName=coursekit-test",
            f"SlurmctldHost={node}(127.0.0.1)",
            "SlurmUser=root",
            f"SlurmctldPort={ctld}",
            f"SlurmdPort={slurmd}",
            # the controller listens on its own address only, not on every interface
            "CommunicationParameters=NoCtldInAddrAny",
            f"AuthInfo=socket={munge_socket}",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"StateSaveLocation={folder / 'state'}",
            f"SlurmdSpoolDir={folder / 'spool'}",
            f"SlurmctldPidFile={folder / 'slurmctld.pid'}",
            f"SlurmdPidFile={folder / 'slurmd.pid'}",
            f"SlurmctldLogFile={folder / 'slurmctld.log'}",
            f"SlurmdLogFile={folder / 'slurmd.log'}",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU",
            "AccountingStorageType=accounting_storage/none",
            "JobAcctGatherType=jobacct_gather/none",
            "JobCompType=jobcomp/none",
            "MpiDefault=none",
            "MailProg=/bin/true",
            "ReturnToService=2",
            "SlurmctldTimeout=30",
            "SlurmdTimeout=30",
            # a cancelled job's processes get SIGTERM, then SIGKILL this many seconds later
            "KillWait=5",
            f"NodeName={node} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory=4096 State=UNKNOWN",
            f"PartitionName={PARTITION} Nodes={node} Default=YES MaxTime=INFINITE State=UP",
            "",
        ]
    )


def log_tails(folder: Path) -> str:
    parts = []
    for name in ("munged.log", "slurmctld.log", "slurmd.log", "slurmctld.out", "slurmd.out"):
        path = folder / name
        if path.is_file():
            lines = path.read_text(errors="replace").splitlines()[-15:]
            parts.append(f"--- {name}\n" + "\n".join(lines))
    return "\n".join(parts)


def start(command: list[str], folder: Path, name: str, env: dict) -> subprocess.Popen:
    with (folder / f"{name}.out").open("wb") as out:
        return subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def wait_until(condition, deadline: float, what: str, daemons, folder: Path) -> None:
    end = time.monotonic() + deadline
    while not condition():
        dead = [p.args[0] for p in daemons if p.poll() is not None]
        if dead or time.monotonic() > end:
            why = f"{', '.join(map(str, dead))} exited" if dead else f"not within {deadline} s"
            raise RuntimeError(f"SLURM did not start ({what}: {why})\n{log_tails(folder)}")
        time.sleep(0.1)


@contextlib.contextmanager
def slurm_host(folder: Path) -> Iterator[SlurmHost]:
    install()
    if os.geteuid() != 0:
        pytest.skip("slurmd runs jobs as their owner, so this test's SLURM needs root")
    folder = Path(folder)
    for sub in ("state", "spool", "munge"):
        # A run killed before its cleanup leaves its key (mungekey will not overwrite
        # one) and slurmctld's saved queue: every host starts from none.
        shutil.rmtree(folder / sub, ignore_errors=True)
        (folder / sub).mkdir(parents=True)
    munge = folder / "munge"  # the key and the daemon's own files: root's alone
    munge.chmod(0o700)
    # munged wants every account able to reach its socket, so not in a test's private
    # folder; a short path too (a socket's path is at most 107 bytes)
    socket_folder = Path(tempfile.mkdtemp(prefix="munge-"))
    socket_folder.chmod(0o755)
    key, munge_socket = munge / "munge.key", socket_folder / "munge.socket"
    subprocess.run(["mungekey", "--create", f"--keyfile={key}"], check=True, capture_output=True)
    node = socket.gethostname().split(".")[0]
    cpus = os.cpu_count() or 1
    conf = folder / "slurm.conf"
    conf.write_text(slurm_conf(folder, node, cpus, munge_socket), encoding="utf-8")
    host = SlurmHost(folder, conf, node, PARTITION, cpus)
    env = host.env
    daemons: list[subprocess.Popen] = []
    try:
        munged = [
            "munged",
            "--foreground",
            f"--key-file={key}",
            f"--socket={munge_socket}",
            f"--pid-file={munge / 'munged.pid'}",
            f"--log-file={folder / 'munged.log'}",
            f"--seed-file={munge / 'munged.seed'}",
        ]
        daemons.append(start(munged, folder, "munged", env))
        wait_until(munge_socket.exists, START_DEADLINE, "munged's socket", daemons, folder)
        daemons.append(start(["slurmctld", "-D", "-i", "-f", str(conf)], folder, "slurmctld", env))
        daemons.append(start(["slurmd", "-D", "-N", node, "-f", str(conf)], folder, "slurmd", env))
        wait_until(
            lambda: host.node_state() == "idle", START_DEADLINE, "node idle", daemons, folder
        )
        yield host
    finally:
        if len(daemons) == 3:  # the controller and the node are up: no job outlives the test
            host.cancel_all()
            with contextlib.suppress(RuntimeError):
                wait_until(lambda: not host.jobs(), STOP_DEADLINE, "jobs gone", [], folder)
        for process in reversed(daemons):
            stop(process)
        shutil.rmtree(socket_folder, ignore_errors=True)


def processes_of(conf: Path) -> list[str]:
    """Live processes (not zombies) started for the SLURM of `conf`: its daemons, job steps
    and whatever its jobs run, which inherit SLURM_CONF: pid and command, one each."""
    marker = f"SLURM_CONF={conf}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
            if state == "Z" or marker not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            found.append(f"{entry.name} {command.strip()}")
    return found
