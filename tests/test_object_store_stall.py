"""A lake in an object store that stops answering mid-run (RELIABILITY.md section 19).

A moto S3 server holds a small Delta lake; ``fdkit serve --data s3://...`` serves it. The test warms a few answers,
then stops the moto process (``SIGSTOP``: its socket still accepts, nothing answers, as a stalled store does):
requests whose data the service holds in memory answer within 1 s, saying in ``X-Fdkit-Lake`` that the store did not
answer; a request that needs the store fails within 15 s with a 503 ``{"error", "message"}`` naming the store; once
the process goes on (``SIGCONT``) every request is answered again.
"""

from __future__ import annotations

import os
import signal
import time

import pyarrow.fs as pafs
import pytest
import requests
from lakes import write_test_lake
from processes import Serve
from test_object_store import _moto, aws_env, new_bucket

from fdkit.server.store import STALE_HEADER

pytest.importorskip("moto", reason="the object-store tests need moto[server] (the dev extra)")

BUCKET = "fdkit-stall"
KEY = "stall-key-0123456789"
WARM = [
    ("/prices", {"ticker": "AAA", "interval": "day", "start_date": "2024-01-02", "end_date": "2024-03-29"}),
    ("/company/facts", {"ticker": "AAA"}),
]
COLD = ("/financials/income-statements", {"ticker": "AAA", "period": "quarterly", "limit": 4})


def _get(url: str, path: str, params: dict, timeout: float = 30.0) -> tuple[requests.Response, float]:
    t = time.monotonic()
    got = requests.get(url + path, params=params, headers={"X-API-KEY": KEY}, timeout=timeout)
    return got, time.monotonic() - t


def test_a_stalled_store_serves_what_is_in_memory_and_names_the_store_for_the_rest(tmp_path):
    proc, endpoint = _moto(tmp_path / "moto.log")
    aws = aws_env(endpoint, FDKIT_S3_REQUEST_TIMEOUT="2")
    srv = None
    stopped = False
    try:
        with pytest.MonkeyPatch.context() as mp:
            fs = new_bucket(mp, aws)
            pafs.copy_files(str(write_test_lake(tmp_path / "lake")), f"{BUCKET}/lake", destination_filesystem=fs)
        (tmp_path / "keys").write_text(f"{KEY} pro\n")
        srv = Serve(tmp_path / "serve.log", "--data", f"s3://{BUCKET}/lake", "--keys", str(tmp_path / "keys"), env=aws)
        want = {}
        for path, params in WARM:
            got, _ = _get(srv.url, path, params)
            assert got.status_code == 200, got.text
            assert STALE_HEADER not in got.headers
            want[path] = got.json()

        os.kill(proc.pid, signal.SIGSTOP)
        stopped = True
        slowest = 0.0
        said = set()
        for _ in range(4):  # past the interval at which the store's change marker is asked again
            for path, params in WARM:
                got, took = _get(srv.url, path, params, timeout=5)
                assert got.status_code == 200 and got.json() == want[path], got.text
                slowest = max(slowest, took)
                said.add(got.headers.get(STALE_HEADER))
            time.sleep(1.0)
        assert slowest < 1.0, slowest
        stale = [s for s in said if s]
        assert stale and "did not answer" in stale[0], said  # the answers say the store is not answering
        got, took = _get(srv.url, *COLD)
        assert took < 15.0, took
        assert got.status_code == 503, (got.status_code, got.text)
        body = got.json()
        assert set(body) == {"error", "message"} and body["error"] == "Lake unreachable", body
        assert f"s3://{BUCKET}/lake" in body["message"] and "Traceback" not in got.text, body
        print(f"\nstore stopped: in memory slowest {slowest:.3f} s; {COLD[0]} 503 in {took:.2f} s")

        os.kill(proc.pid, signal.SIGCONT)
        stopped = False
        t = time.monotonic()
        while True:  # the store answers again: so does every request (within a change check's interval)
            got, took = _get(srv.url, *COLD)
            if got.status_code == 200 or time.monotonic() - t > 20:
                break
            time.sleep(0.5)
        assert got.status_code == 200, got.text
        assert len(got.json()["income_statements"]) == 4
        back = time.monotonic() - t
        while True:  # and the answers stop saying so once a change check is answered
            for path, params in WARM:
                got, _ = _get(srv.url, path, params)
                assert got.status_code == 200 and got.json() == want[path]
            if STALE_HEADER not in got.headers or time.monotonic() - t > 20:
                break
            time.sleep(0.25)
        assert STALE_HEADER not in got.headers, got.headers
        print(
            f"recovered: {COLD[0]} 200 {back:.2f} s after the store went on, no {STALE_HEADER} after "
            f"{time.monotonic() - t:.2f} s"
        )
        log = (tmp_path / "serve.log").read_text()
        assert "did not answer" in log and "answers again" in log and "Traceback" not in log, log[-2000:]
    finally:
        if stopped:
            os.kill(proc.pid, signal.SIGCONT)
        if srv is not None:
            srv.stop()
        proc.kill()
        proc.wait(10)
