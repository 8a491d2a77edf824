"""Loopback ports for the servers the tests start (a hub and its services, JupyterLab,
PostgreSQL, SLURM's daemons, a Dask scheduler): free when chosen, bound by the server later."""

from __future__ import annotations

import random
import socket


def free_ports(count: int) -> int:
    """A port p with p .. p+count-1 free on loopback (hub, its API, the proxy's API, ...).

    Chosen outside the ports the kernel hands out for connections (ip_local_port_range):
    the hub's services bind theirs seconds later, and any process's outgoing connection (a
    grading worker's, the browser's) could take one of those in between (seen on 4 pytest
    workers: the LTI poster's bind failed with EADDRINUSE)."""
    with open("/proc/sys/net/ipv4/ip_local_port_range", encoding="ascii") as ranges:
        low, high = (int(port) for port in ranges.read().split())
    below = range(max(1024, low - 10000), low - count)
    choices = below if len(below) > 1000 else range(high + 1, 65536 - count)
    for _ in range(50):
        first = random.choice(choices)
        try:
            for port in range(first, first + count):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", port))
        except OSError:
            continue
        return first
    raise RuntimeError("no free ports")


def free_port() -> int:
    """One port, as `free_ports`."""
    return free_ports(1)
