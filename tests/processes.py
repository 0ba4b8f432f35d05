"""Real servers as subprocesses for the scale tests: ``fdkit serve`` instances, a moto S3 server, nginx.

Each is started on a port of its own (ephemeral where the program can report it), with its output in a file the test
can read (what each instance served, what the object store was asked), and stopped by its process id.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    """A TCP port free on loopback now (for programs that cannot bind port 0 and say which they got)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(pattern: str, log: Path, proc: subprocess.Popen, timeout: float = 60.0) -> re.Match[str]:
    """The first match of ``pattern`` in the file ``log`` that ``proc`` writes (fails when it exits or times out)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = re.search(pattern, log.read_text(errors="replace")) if log.exists() else None
        if found:
            return found
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args[:3]} exited with {proc.returncode}: {log.read_text(errors='replace')}")
        time.sleep(0.05)
    raise RuntimeError(f"{proc.args[:3]} said nothing matching {pattern!r} in {timeout} s")


def wait_http(url: str, timeout: float = 60.0) -> None:
    """Wait until ``url`` answers (any status)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            requests.get(url, timeout=2)
            return
        except requests.RequestException:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def env_with(extra: Mapping[str, str]) -> dict[str, str]:
    """This process's environment with the worktree first on the path and ``extra`` on top."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(":")}
    env.update(extra)
    return env


class Serve:
    """``fdkit serve`` in a subprocess; ``url`` is where it listens, ``log`` its stderr."""

    def __init__(self, log: Path, *args: str, env: Mapping[str, str] | None = None) -> None:
        self.log = log
        with open(log, "w") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "fdkit.cli", "serve", "--port", "0", *args],
                stdout=subprocess.DEVNULL,
                stderr=out,
                env=env_with(env or {}),
            )
        self.url = wait_for(r"on (http://127\.0\.0\.1:\d+)", log, self.proc).group(1)
        wait_http(self.url + "/healthz")

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def stop(self) -> None:
        stop(self.proc)


def stop(proc: subprocess.Popen) -> None:
    """Stop one process this test started (SIGINT, then SIGKILL after 15 s)."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
