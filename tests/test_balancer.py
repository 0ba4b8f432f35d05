"""Past one machine: several ``fdkit serve`` instances over one lake behind a real load balancer (nginx).

Two instances share the keys file and the cursor secret and are started with the balancer's address as
``--public-url``; nginx, started by the test with a config written into ``tmp_path`` (round robin, no daemon, its
own pid, logs and temp folders), says which instance answered in an ``X-Upstream`` header. Checked: the balancer
answers every catalog example as one instance does; a paged walk through it is served alternately by both
instances and its ``next_page_url`` links name the balancer, never an instance; a cursor one instance issued opens
on the other (and not on a server with another secret); usage is metered per instance; the fdkit client works
against the balancer's URL.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
import requests
from examples import EXAMPLES, ask, comparable
from processes import Serve, free_port, stop, wait_http

import fdkit
import fdkit.server

NGINX = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.access(p, os.X_OK)), None)
pytestmark = pytest.mark.skipif(NGINX is None, reason="nginx is not installed (apt-get install nginx; .ci/run tries)")

KEY = "balancer-key-0123456789"
SECRET = "a-cursor-secret-shared-by-every-instance-0123"
QUERY = {"ticker": "AAPL", "interval": "day", "start_date": "2022-01-01", "end_date": "2022-12-29"}

CONFIG = """
{user}
worker_processes 1;
daemon off;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log {tmp}/access.log;
    client_body_temp_path {tmp}/client_body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    upstream fdkit {{
{servers}
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://fdkit;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            add_header X-Upstream $upstream_addr always;
        }}
    }}
}}
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """Two instances over the bundled lake behind nginx: ``(balancer URL, [instances])``."""
    tmp = tmp_path_factory.mktemp("balancer")
    port = free_port()
    public = f"http://127.0.0.1:{port}"
    keys = tmp / "keys"
    keys.write_text(f"{KEY} pro\n")
    instances: list[Serve] = []
    nginx = None
    try:
        for i in range(2):
            instances.append(
                Serve(tmp / f"serve-{i}.log", "--keys", str(keys), "--cursor-secret", SECRET, "--public-url", public)
            )
        servers = "\n".join(f"        server 127.0.0.1:{s.port};" for s in instances)
        # nginx started as root hands its workers to `nobody`, who could not write the temp folders here
        user = f"user {pwd.getpwuid(os.geteuid()).pw_name};" if os.geteuid() == 0 else ""
        conf = tmp / "nginx.conf"
        conf.write_text(CONFIG.format(user=user, tmp=tmp, servers=servers, port=port))
        assert NGINX is not None
        check = subprocess.run(
            [NGINX, "-t", "-p", str(tmp), "-e", str(tmp / "error.log"), "-c", str(conf)],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert check.returncode == 0, check.stderr
        nginx = subprocess.Popen(
            [NGINX, "-p", str(tmp), "-e", str(tmp / "error.log"), "-c", str(conf)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_http(public + "/healthz")
        yield public, instances
    finally:
        if nginx is not None:
            stop(nginx)
        for s in instances:
            s.stop()


def _upstream(response: requests.Response) -> str:
    return response.headers["X-Upstream"]


def test_the_balancer_answers_every_catalog_example_as_one_instance_does(cluster):
    public, (a, b) = cluster
    seen: Counter[str] = Counter()
    with requests.Session() as balancer, requests.Session() as direct:
        for name, params in EXAMPLES.items():
            if params is None:
                continue
            got = ask(balancer, public, KEY, name)
            seen[_upstream(got)] += 1
            assert comparable(got) == comparable(ask(direct, a.url, KEY, name)), name
    assert set(seen) == {f"127.0.0.1:{a.port}", f"127.0.0.1:{b.port}"}  # round robin: both answered
    assert abs(seen[f"127.0.0.1:{a.port}"] - seen[f"127.0.0.1:{b.port}"]) <= 1, seen


def _walk(url: str, key: str) -> tuple[list[dict], list[requests.Response]]:
    nxt: str | None = url + "/prices"
    params: dict | None = QUERY
    rows: list[dict] = []
    pages = []
    while nxt:
        r = requests.get(nxt, params=params, headers={"X-API-KEY": key}, timeout=30)
        assert r.status_code == 200, r.text
        body, params = r.json(), None
        pages.append(r)
        rows, nxt = rows + body["prices"], body.get("next_page_url")
    return rows, pages


def test_a_walk_of_pages_crosses_instances_and_links_name_the_balancer(cluster, ref_server):
    public, (a, b) = cluster
    rows, pages = _walk(public, KEY)
    links = [p.json().get("next_page_url") for p in pages]
    assert all(link.startswith(public + "/prices?cursor=") for link in links[:-1]) and links[-1] is None, links
    upstreams = [_upstream(p) for p in pages]  # round robin: each page from the other instance
    assert len(upstreams) == 3 and all(x != y for x, y in zip(upstreams, upstreams[1:], strict=False)), upstreams
    assert rows == _walk(ref_server.base_url, ref_server.api_key)[0] and len(rows) == 250


def test_a_cursor_issued_by_one_instance_opens_on_another(cluster):
    public, (a, b) = cluster
    h = {"X-API-KEY": KEY}
    first = requests.get(a.url + "/prices", params=QUERY, headers=h, timeout=30).json()
    cursor_url = first["next_page_url"]
    assert cursor_url.startswith(public)  # issued by A, linked at the balancer
    query = cursor_url.split("?", 1)[1]
    on_a = requests.get(f"{a.url}/prices?{query}", headers=h, timeout=30)
    on_b = requests.get(f"{b.url}/prices?{query}", headers=h, timeout=30)
    assert on_a.status_code == on_b.status_code == 200
    assert (
        on_b.json()["prices"] == on_a.json()["prices"]
        and on_b.json()["prices"][0]["time"] > first["prices"][-1]["time"]
    )
    # a server with another secret refuses it: the shared secret is what makes the instances interchangeable
    with fdkit.server.start(keys={KEY: "pro"}, cursor_secret=b"another-secret-" * 3) as other:
        refused = requests.get(f"{other.base_url}/prices?{query}", headers=h, timeout=30)
    assert refused.status_code == 400 and "another server" in refused.json()["message"]


def test_usage_is_metered_per_instance(cluster):
    """Each instance counts the pages it answered: ``X-FDS-Usage`` and ``/usage`` are that instance's count, and a
    key's total is the sum over the instances (``fdkit serve`` logs each instance's counts when it stops)."""
    public, (a, b) = cluster
    h = {"X-API-KEY": KEY}
    before = {s.url: requests.get(s.url + "/usage", headers=h, timeout=30).json()["requests"] for s in (a, b)}
    by_upstream: dict[str, list[int]] = {}
    for _ in range(6):
        r = requests.get(public + "/company/facts", params={"ticker": "MSFT"}, headers=h, timeout=30)
        by_upstream.setdefault(_upstream(r), []).append(int(r.headers["X-FDS-Usage"]))
    assert len(by_upstream) == 2
    for counts in by_upstream.values():  # each instance's own count, one more per page it answered
        assert counts == list(range(counts[0], counts[0] + 3)), by_upstream
    after = {s.url: requests.get(s.url + "/usage", headers=h, timeout=30).json()["requests"] for s in (a, b)}
    assert sum(after.values()) - sum(before.values()) == 6
    assert all(after[s.url] - before[s.url] == 3 for s in (a, b))


def test_the_client_works_against_the_balancer(cluster, ref_server):
    public, (a, b) = cluster
    through = fdkit.Client(KEY, public, cache=False, progress=False)
    # an instance links its pages at the balancer (the client refuses to send its key elsewhere): the answer to
    # compare with is one server's over the same lake
    direct = fdkit.Client(ref_server.api_key, ref_server.base_url, cache=False, progress=False)
    try:
        got = through.prices(["AAPL", "MSFT"], start_date="2020-01-01", end_date="2024-12-31")
        pd.testing.assert_frame_equal(
            got, direct.prices(["AAPL", "MSFT"], start_date="2020-01-01", end_date="2024-12-31")
        )
        assert len(got) == 2 * 1258
        facts = through.company_facts("NVDA")
        assert facts.equals(direct.company_facts("NVDA"))
    finally:
        through.close()
        direct.close()
    log = Path(a.log).parent / "access.log"
    assert log.read_text().count("/prices") >= 2  # the client's requests went through nginx
