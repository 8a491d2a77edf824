"""The Dask cluster `make grade` grades on: a LocalCluster here, or a running one over TLS.

    coursekit cluster certs [DIR]   # a CA and one certificate for the cluster

With no scheduler named, `make grade` starts a LocalCluster of worker
processes (one thread each) on 127.0.0.1, dashboard off unless asked. With
`--scheduler tls://HOST:8786` (or COURSE_DASK_SCHEDULER) it connects to a
running scheduler with the certificates in COURSE_DASK_TLS_DIR (default
build/dask-tls/ of the course). Plain tcp:// is accepted on loopback only:
past this machine, the cluster's traffic (learners' files, grades) is TLS.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import ipaddress
import logging
import os
import shutil
import socket
import sys
import tempfile
from pathlib import Path

from coursekit.core.messages import _

LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}
CA_FILE, CERT_FILE, KEY_FILE = "ca.pem", "node.pem", "node-key.pem"


# The scheduler hands a worker only as many tasks as it has threads (Dask's default, 1.1,
# gives a one-thread worker a second task to hold in its queue). When a worker dies, Dask
# counts every task it held as suspicious: with a held task, a submission that kills its
# workers would take an innocent one queued behind it down too (KilledWorker after 3).
ONE_TASK_PER_THREAD = {"distributed.scheduler.worker-saturation": 1.0}
# Every grading worker's Dask settings, LocalCluster's and SLURM's jobs' alike: a task is a
# whole notebook, so no stack sampling every 10 ms, no disk counters twice a second, the
# event loop's health checked twice a second, not 50 times (an idle LocalCluster of 4:
# 72 -> 18 CPU-ms a second; it still warns past tick.limit).
WORKER_SETTINGS = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "500ms",
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.admin.system-monitor.disk": False,
    "distributed.worker.memory.monitor-interval": "1s",
}
# Imported first by every grading worker: the grader, once (LocalCluster's forkserver
# preloads it; a SLURM job's worker is given it as a Dask --preload).
WORKER_PRELOAD = "coursekit.cluster.worker_start"


def default_jobs() -> int:
    """Two workers more than cores: a worker waits for its kernel (start, replies) about a
    third of the time, and the extra two fill those gaps (2 cores: -j 3 and 4 beat 2 by
    15-30 %, 6 and 8 were slower; `make bench`)."""
    return (os.cpu_count() or 1) + 2


def dask_environment(settings: dict) -> dict[str, str]:
    """Dask settings in the names Dask reads from a process's environment
    (dask.config.collect_env), for a Dask process started by hand or by a job."""
    return {
        "DASK_" + key.replace(".", "__").replace("-", "_").upper(): str(value)
        for key, value in settings.items()
    }


# ONE_TASK_PER_THREAD for a `dask scheduler` started by hand (README, "Past one machine").
SCHEDULER_ENVIRONMENT = dask_environment(ONE_TASK_PER_THREAD)


class ClusterError(RuntimeError):
    """The cluster could not be reached or refused: a message for the instructor
    in the course's language."""


def tls_folder(root: Path) -> Path:
    return Path(os.environ.get("COURSE_DASK_TLS_DIR") or Path(root) / "build" / "dask-tls")


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_address(address: str) -> str:
    """The scheme of a scheduler address this course may use (tls://, or tcp:// on loopback)."""
    from distributed.comm.addressing import get_address_host, parse_address

    scheme, _location = parse_address(address)
    host = get_address_host(address)
    if scheme == "tls" or (scheme == "tcp" and is_loopback(host)):
        return scheme
    refused = _(
        "The scheduler address {address} cannot be used: a cluster beyond 127.0.0.1 is "
        "reached over TLS (tls://) only (make dask-certs, README's 'Past one machine')."
    )
    raise ClusterError(refused.format(address=address))


def security(root: Path):
    from distributed.security import Security

    folder = tls_folder(root)
    files = [folder / name for name in (CA_FILE, CERT_FILE, KEY_FILE)]
    missing = [str(path) for path in files if not path.is_file()]
    if missing:
        no_certificates = _(
            "No TLS certificate: {missing} (make them with make dask-certs, or put the CA "
            "and the certificates in COURSE_DASK_TLS_DIR)"
        )
        raise ClusterError(no_certificates.format(missing=", ".join(missing)))
    ca, cert, key = (str(path) for path in files)
    # One certificate for every member (make_certificates): the client's, and the
    # scheduler's and workers' where this process starts them (make grade --slurm).
    return Security(
        tls_ca_file=ca,
        tls_client_cert=cert,
        tls_client_key=key,
        tls_scheduler_cert=cert,
        tls_scheduler_key=key,
        tls_worker_cert=cert,
        tls_worker_key=key,
        require_encryption=True,
    )


def connect_timeout() -> float:
    """Seconds to reach a running scheduler, and to reach it again once lost: Dask's own
    `distributed.comm.timeouts.connect` (30 s unless set, e.g. by
    DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT=10s)."""
    import dask.config
    from dask.utils import parse_timedelta

    return parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"), "s")


@contextlib.contextmanager
def client_for(root: Path, scheduler: str | None, workers: int, dashboard: bool):
    """A distributed Client: to `scheduler`, or to a LocalCluster of `workers` processes."""
    from distributed import Client, LocalCluster

    scheduler = scheduler or os.environ.get("COURSE_DASK_SCHEDULER") or None
    if scheduler:
        scheme = check_address(scheduler)
        kwargs = {"security": security(root)} if scheme == "tls" else {}
        try:
            client = Client(scheduler, timeout=connect_timeout(), **kwargs)
        except (OSError, TimeoutError) as error:
            unreached = _(
                "Could not connect to the scheduler {scheduler} ({error_type}: {error}). "
                "Check that the scheduler is up and that its address and certificates are right."
            )
            raise ClusterError(
                unreached.format(scheduler=scheduler, error_type=type(error).__name__, error=error)
            ) from None
        with client:
            yield client
        return
    # The workers' scratch courses (with solutions/ and grader_tests/) live in a folder
    # only this user can enter, made here: not a shared /tmp/dask-scratch-space that
    # another account on the machine could have made first.
    private = tempfile.mkdtemp(prefix="coursekit-grading-")
    try:
        with (
            forkserver_workers(),
            LocalCluster(
                n_workers=workers,
                local_directory=private,
                threads_per_worker=1,  # a worker grades one notebook at a time (autograde chdirs)
                processes=True,
                host="127.0.0.1",
                scheduler_port=0,
                dashboard_address="127.0.0.1:8787" if dashboard else None,
                # Without the dashboard the scheduler still serves /health on HTTP: loopback,
                # any port.
                scheduler_kwargs=None if dashboard else {"dashboard_address": "127.0.0.1:0"},
                worker_dashboard_address=None,
                silence_logs=logging.ERROR,
            ) as cluster,
            Client(cluster) as client,
        ):
            yield client
    finally:
        shutil.rmtree(private, ignore_errors=True)


@contextlib.contextmanager
def forkserver_workers():
    """While it lasts: LocalCluster's workers forked from a forkserver that imported the
    grader once, and Dask's own monitoring at a pace for tasks of seconds.

    Dask's default is a fresh interpreter per worker (spawn); a forkserver is a
    fresh, single-threaded interpreter too (unlike forking this process, which
    runs the client's threads), and it preloads `coursekit.cluster.worker_start`.
    On exit the forkserver is stopped and Dask's settings are what they were: a
    process that starts other clusters afterwards gets Dask's defaults again.
    """
    import dask
    from distributed.utils import get_mp_context

    settings = {
        **ONE_TASK_PER_THREAD,  # LocalCluster's scheduler runs in this process
        "distributed.worker.multiprocessing-method": "forkserver",
        **WORKER_SETTINGS,  # the nannies pass these to their workers
    }
    with dask.config.set(settings):
        get_mp_context().set_forkserver_preload([WORKER_PRELOAD])
        try:
            yield
        finally:
            stop_forkserver()


def held_task_warning(client) -> str | None:
    """A warning when the scheduler hands a worker more tasks than it runs at once."""
    try:
        saturation = client.run_on_scheduler(
            lambda dask_scheduler: dask_scheduler.WORKER_SATURATION
        )
    except (OSError, TimeoutError):  # the scheduler gone: the caller says so
        raise
    except Exception as error:  # a scheduler that runs no function of ours: say it, grade on
        unread = _("Warning: could not read the scheduler's worker-saturation ({error_type}).")
        return unread.format(error_type=type(error).__name__)
    if saturation <= ONE_TASK_PER_THREAD["distributed.scheduler.worker-saturation"]:
        return None
    environment = " ".join(f"{name}={value}" for name, value in SCHEDULER_ENVIRONMENT.items())
    held = _(
        "Warning: the scheduler's worker-saturation is {saturation}. A submission that kills "
        "its worker can fail the other submissions waiting on that worker too. Restart the "
        "scheduler with {environment} (README's 'Past one machine')."
    )
    return held.format(saturation=saturation, environment=environment)


def stop_forkserver() -> None:
    """End the forkserver and wait for it (it reaps the workers it forked), so nothing of
    the run outlives it and its CPU time counts in this process's children (make bench)."""
    from multiprocessing import forkserver

    with contextlib.suppress(Exception):
        forkserver._forkserver._stop()  # the stdlib's own stop (its tests use it)


# ---------------------------------------------------------------- certificates


def make_certificates(folder: Path, hosts: list[str], days: int = 365) -> list[Path]:
    """A private CA and one certificate it signs, for the scheduler, workers and client alike.

    Dask checks that a peer's certificate is signed by the CA (not its host
    name), so one certificate serves every member; the CA's key stays here to
    sign no more than that. Keys are readable by their owner only.
    """
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    folder.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    until = now + datetime.timedelta(days=days)

    def name(common: str):
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(name("coursekit grading CA"))
        .issuer_name(name("coursekit grading CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(until)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    alt_names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            alt_names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            alt_names.append(x509.DNSName(host))
    cert = (
        x509.CertificateBuilder()
        .subject_name(name("coursekit grading node"))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(until)
        .add_extension(x509.SubjectAlternativeName(alt_names), critical=False)
        .add_extension(
            x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
            ),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    written = []
    for filename, data, private in (
        (CA_FILE, ca_cert.public_bytes(pem), False),
        ("ca-key.pem", _private(ca_key), True),
        (CERT_FILE, cert.public_bytes(pem), False),
        (KEY_FILE, _private(key), True),
    ):
        path = folder / filename
        path.unlink(missing_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if private else 0o644)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        written.append(path)
    return written


def _private(key) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def main(argv=None) -> int:
    from coursekit.core.course import add_root_argument

    parser = argparse.ArgumentParser(prog="python -m coursekit.cluster.dask_cluster")
    commands = parser.add_subparsers(dest="command", required=True)
    certs = commands.add_parser(
        "certs", help="a CA and a certificate for scheduler, workers, client"
    )
    certs.add_argument(
        "folder", nargs="?", type=Path, help="default: COURSE_DASK_TLS_DIR or build/dask-tls"
    )
    certs.add_argument("--host", action="append", help="a name or address of a member (repeatable)")
    certs.add_argument("--days", type=int, default=365)
    add_root_argument(certs)
    args = parser.parse_args(argv)
    folder = args.folder or tls_folder(args.root)
    hosts = args.host or sorted({socket.getfqdn(), "localhost", "127.0.0.1"})
    for path in make_certificates(folder, hosts, args.days):
        print(path)
    print(
        f"Copy {folder / CA_FILE}, {folder / CERT_FILE} and {folder / KEY_FILE} to every member "
        "(keep ca-key.pem here).",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
