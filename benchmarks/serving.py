"""What the benchmarks share to run ``fdkit serve`` in its own process: a free port and waiting until it answers."""

from __future__ import annotations

import socket
import subprocess
import time
from urllib.request import Request, urlopen


def free_port() -> int:
    """A TCP port free on loopback now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(proc: subprocess.Popen, url: str, key: str, pause: float = 0.1) -> None:
    """Return once ``url``'s ``/healthz`` answers 200; raise if the server process exits first.

    Args:
        proc: the ``fdkit serve`` process.
        url: its base URL.
        key: an API key it accepts.
        pause: seconds between tries.
    """
    while True:
        try:
            with urlopen(Request(url + "/healthz", headers={"X-API-KEY": key}), timeout=2) as r:  # noqa: S310
                r.read()
                if r.status == 200:
                    return
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(f"fdkit serve exited with {proc.returncode}") from None
            time.sleep(pause)
