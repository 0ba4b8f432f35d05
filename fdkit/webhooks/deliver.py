"""Delivery of webhook events to configured destinations: signed POSTs, at least once.

Destinations file (JSON): ``[{"url": ..., "secret": ..., "api_version": "2026-01-01", "types": ["*"]}]``;
``types`` lists event types (``*`` for all). Each event is POSTed with a 10 s deadline and retried with
exponential backoff (0.25 s doubling to 8 s, up to ``max_attempts``) on a connection failure, a timeout, 429 or
5xx; every attempt is re-signed (fresh timestamp) and written to the delivery log (JSON lines). A 2xx is an
acknowledgement; any other 4xx is final (the receiver refused the event).

Example:
    >>> d = Destination.from_dict({"url": "http://127.0.0.1:9/hook", "secret": "s"})
    >>> d.wants("income_statements.created")
    True
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import requests

from fdkit.errors import redact
from fdkit.webhooks.events import API_VERSION
from fdkit.webhooks.signing import HEADER, sign
from fdkit.wire import transport

__all__ = ["Destination", "load_destinations", "deliver", "DeliveryReport", "DEADLINE"]

DEADLINE = 10.0


@dataclass(frozen=True)
class Destination:
    """Where events go."""

    url: str
    secret: str
    api_version: str = API_VERSION
    types: tuple[str, ...] = ("*",)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Destination:
        """Build from a destinations-file entry."""
        return cls(
            url=d["url"],
            secret=d["secret"],
            api_version=d.get("api_version", API_VERSION),
            types=tuple(d.get("types", ["*"])),
        )

    def wants(self, event_type: str) -> bool:
        """Whether this destination subscribed to ``event_type``."""
        return "*" in self.types or event_type in self.types

    def __repr__(self) -> str:  # never show the secret
        return f"Destination(url={self.url!r}, api_version={self.api_version!r}, types={self.types!r})"


def load_destinations(path: str | Path) -> list[Destination]:
    """Read a destinations file.

    Args:
        path: JSON file with a list of destinations.

    Returns:
        The destinations.

    Raises:
        ValueError: naming a malformed entry.
    """
    data = json.loads(Path(path).read_text())
    if not isinstance(data, list):
        raise ValueError("a destinations file holds a JSON list")
    out = []
    for i, d in enumerate(data):
        if not isinstance(d, dict) or not {"url", "secret"} <= set(d):
            raise ValueError(f"destination {i} needs 'url' and 'secret'")
        out.append(Destination.from_dict(d))
    return out


@dataclass
class DeliveryReport:
    """Outcome of a delivery run: per-event final status, attempts and the log path."""

    acked: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    attempts: Counter = field(default_factory=Counter)
    statuses: Counter = field(default_factory=Counter)


def _post(session: requests.Session, dest: Destination, body: bytes, limit: float = DEADLINE) -> tuple[int | None, str]:
    """One attempt: connect, send and the whole answer within ``limit`` seconds (a trickling receiver fails)."""
    headers = {
        "Content-Type": "application/json",
        HEADER: sign(dest.secret, body),
        "X-FDS-Api-Version": dest.api_version,
    }
    try:
        with transport.deadline(limit):
            r = session.post(dest.url, data=body, headers=headers, timeout=limit)
        return r.status_code, r.text[:200]
    except (requests.RequestException, transport.DeadlineExceeded) as exc:
        return None, redact(type(exc).__name__ + ": " + str(exc))[:200]


def deliver(
    events: Sequence[dict[str, Any]],
    destinations: Iterable[Destination],
    *,
    log: str | Path | None = None,
    max_attempts: int = 8,
    base_delay: float = 0.25,
    max_delay: float = 8.0,
    workers: int = 4,
    deadline: float | None = None,
    progress: Callable[[DeliveryReport, int], None] | None = None,
    attempt_deadline: float = DEADLINE,
) -> DeliveryReport:
    """Deliver events to every destination that wants them, at least once.

    Args:
        events: envelopes (dicts).
        destinations: where to send them.
        log: a JSON-lines delivery log to append to.
        max_attempts: attempts per (event, destination) before giving up.
        base_delay: first backoff delay in seconds (doubles each retry).
        max_delay: cap on one backoff delay.
        workers: concurrent deliveries.
        deadline: seconds the whole run may take; past it no attempt starts and no backoff sleeps, and every
            undelivered event is reported failed ("deadline passed"). ``None``: no deadline.
        progress: called with the report and the number of finished (event, destination) jobs after each one.
        attempt_deadline: seconds one attempt may take in all: connect, send and the whole answer (10 s).

    Returns:
        A :class:`DeliveryReport`.
    """
    report = DeliveryReport()
    lock = threading.Lock()
    end = None if deadline is None else time.monotonic() + deadline
    finished = [0]
    log_file = open(log, "a", encoding="utf-8") if log else None  # noqa: SIM115
    session = requests.Session()
    adapter = transport.DeadlineAdapter(pool_connections=workers, pool_maxsize=workers, max_retries=0, max_bytes=2**20)
    session.mount("http://", adapter)
    session.mount("https://", adapter)

    def one(job: tuple[dict[str, Any], Destination]) -> None:
        try:
            attempt_all(job)
        finally:
            with lock:
                finished[0] += 1
                if progress is not None:
                    progress(report, finished[0])

    def attempt_all(job: tuple[dict[str, Any], Destination]) -> None:
        event, dest = job
        body = orjson.dumps({**event, "api_version": dest.api_version})  # the destination's pinned version
        delay = base_delay
        detail = "no attempt made"
        for attempt in range(1, max_attempts + 1):
            if end is not None and time.monotonic() >= end:
                with lock:
                    report.failed[event["id"]] = f"deadline passed after {attempt - 1} attempt(s): {detail}"
                return
            t0 = time.monotonic()
            status, detail = _post(session, dest, body, attempt_deadline)
            with lock:
                report.attempts[event["id"]] += 1
                report.statuses[status if status is not None else "error"] += 1
                if log_file:
                    log_file.write(
                        json.dumps(
                            {
                                "event": event["id"],
                                "type": event["type"],
                                "url": dest.url,
                                "attempt": attempt,
                                "status": status,
                                "detail": detail,
                                "ms": round((time.monotonic() - t0) * 1000, 1),
                                "at": round(time.time(), 3),
                            }
                        )
                        + "\n"
                    )
            if status is not None and 200 <= status < 300:
                with lock:
                    report.acked.append(event["id"])
                return
            if status is not None and 400 <= status < 500 and status != 429:
                with lock:
                    report.failed[event["id"]] = f"refused: HTTP {status} {detail}"
                return
            if attempt < max_attempts:
                pause = min(delay, max_delay)
                if end is not None:
                    pause = max(0.0, min(pause, end - time.monotonic()))
                time.sleep(pause)
                delay *= 2
        with lock:
            report.failed[event["id"]] = f"gave up after {max_attempts} attempts: {detail}"

    jobs = [(e, d) for d in destinations for e in events if d.wants(e["type"])]
    try:
        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            list(pool.map(one, jobs))
    finally:
        session.close()
        if log_file:
            log_file.close()
    return report
