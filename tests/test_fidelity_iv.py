"""Fidelity to the real service's documents, fourth round, over real HTTP against ``fdkit serve``.

Broad market news without a ticker (the 2026 document: "Omit for broad market news"), a filing's items by its
accession number alone, ``/`` and ``/redoc`` (offline, as ``/docs``), and what ``fdkit serve`` says at startup of the
installed data packages (``fdkit-history``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pandas as pd
import pytest
import requests
from reference import reference_document

import fdkit
import fdkit.server
from fdkit.catalog.endpoints import CATALOG
from fdkit.lake.io import default_data_dir, read_dataset

ROOT = Path(__file__).resolve().parents[1]


def _get(srv, path, params=None, **kw):
    return requests.get(srv.base_url + path, params=params, headers={"X-API-KEY": srv.api_key}, timeout=60, **kw)


def _walk(srv, path, params):
    """Every record of a paginated answer, following ``next_page_url`` (with the key, as a client does)."""
    body = _get(srv, path, params).json()
    records, pages = list(body["news"]), 1
    while body.get("next_page_url"):
        body = requests.get(body["next_page_url"], headers={"X-API-KEY": srv.api_key}, timeout=60).json()
        records += body["news"]
        pages += 1
    return records, pages


def _problem(r, status):
    assert r.status_code == status, (r.status_code, r.text)
    assert set(r.json()) == {"error", "message"}, r.text


# -- 1. /news without a ticker: broad market news ------------------------------------------------------------------
def _broad_news_from_the_lake() -> pd.DataFrame:
    """The lake's articles newest first, each article (url) once, by code of its own."""
    news = read_dataset(default_data_dir(), "news")
    news = news.sort_values("date", ascending=False, kind="stable")
    return news[~news["url"].duplicated() | news["url"].isna()]


def test_the_2026_document_makes_the_news_ticker_optional():
    params = {p["name"]: p for p in reference_document("openapi.json")["paths"]["/news"]["get"]["parameters"]}
    assert params["ticker"]["required"] is False and "broad market news" in params["ticker"]["description"]
    assert not CATALOG["news"].param("ticker").required


def test_news_without_a_ticker_answers_the_newest_articles_of_every_ticker(ref_server):
    r = _get(ref_server, "/news", {"limit": 5})
    assert r.status_code == 200, r.text
    news = r.json()["news"]
    assert len(news) == 5
    lake = _broad_news_from_the_lake()
    dates = [a["date"] for a in news]
    assert dates == sorted(dates, reverse=True)
    assert dates == [d.strftime("%Y-%m-%d") for d in lake["date"].iloc[:5]]
    rows = {(str(t), u) for t, u in zip(lake["ticker"], lake["url"], strict=True)}
    assert all((a["ticker"], a["url"]) in rows for a in news)  # each one an article of the lake, as it is there
    hundred, _ = _walk(ref_server, "/news", {"limit": 100})
    assert len(hundred) == 100 and len({a["ticker"] for a in hundred}) > 1  # across tickers
    assert [a["date"] for a in hundred] == [d.strftime("%Y-%m-%d") for d in lake["date"].iloc[:100]]
    assert len({a["url"] for a in hundred}) == 100  # an article listed under several tickers comes once


def test_broad_news_pages_as_a_companys_news_pages(ref_server):
    first = _get(ref_server, "/news", {"limit": 30}).json()
    assert len(first["news"]) == CATALOG["news"].page_size and "ticker=" not in first["next_page_url"]
    walked, pages = _walk(ref_server, "/news", {"limit": 30})
    assert len(walked) == 30 and pages == 3
    whole, _ = _walk(ref_server, "/news", {"limit": 100})
    assert walked == whole[:30]  # the pages of the cursor are the answer's, in order, none repeated


def test_broad_news_honours_the_date_filters(ref_server):
    got, _ = _walk(ref_server, "/news", {"start_date": "2024-09-10", "end_date": "2024-09-15", "limit": 100})
    assert got and all("2024-09-10" <= a["date"] <= "2024-09-15" for a in got)
    lake = _broad_news_from_the_lake()
    inside = lake[(lake["date"] >= "2024-09-10") & (lake["date"] < "2024-09-16")]
    assert len(got) == min(100, len(inside))
    assert _get(ref_server, "/news", {"end_date": "1990-01-01"}).json()["news"] == []


def test_a_companys_news_is_still_its_own(ref_server):
    news = _get(ref_server, "/news", {"ticker": "msft", "limit": 25}).json()["news"]
    assert len(news) == 10 and {a["ticker"] for a in news} == {"MSFT"}


def test_bad_broad_news_requests_are_4xx_problems(ref_server):
    _problem(_get(ref_server, "/news", {"limit": 0}), 400)
    _problem(_get(ref_server, "/news", {"start_date": "2024-02-30"}), 400)
    _problem(_get(ref_server, "/news", {"ticker": ""}), 400)
    _problem(_get(ref_server, "/news", {"ticker": "NOPE"}), 404)


def test_the_client_fetches_broad_news_without_a_ticker(ref_client):
    df = ref_client.news(limit=5)
    assert len(df) == 5 and df.index.names == ["ticker", "date"]
    assert df.index.get_level_values("date").max() == _broad_news_from_the_lake()["date"].iloc[0]
    with pytest.warns(fdkit.TruncatedWarning):  # the service's default of 5, and more exist
        assert len(fdkit.news(client=ref_client)) == 5
    assert set(fdkit.news(limit=40, client=ref_client).index.get_level_values("ticker")) > {"MSFT"}


# -- 2. /filings/items by accession number -------------------------------------------------------------------------
def _filings() -> pd.DataFrame:
    items = read_dataset(default_data_dir(), "filing_items")
    return items.dropna(subset=["accession_number"]).drop_duplicates("accession_number")


def test_filing_items_by_accession_number_alone(ref_server):
    filings = _filings()
    assert len(filings) >= 3
    items = read_dataset(default_data_dir(), "filing_items")
    for row in filings.itertuples(index=False):
        r = _get(ref_server, "/filings/items", {"ticker": row.ticker, "accession_number": row.accession_number})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["accession_number"] == row.accession_number and body["ticker"] == row.ticker
        assert body["filing_type"] == row.filing_type and body["year"] == int(row.year)
        own = items[items["accession_number"].astype("string") == row.accession_number]
        assert [i["number"] for i in body["items"]] == own["number"].astype(str).tolist()
        same = {
            "ticker": row.ticker,
            "filing_type": row.filing_type,
            "year": int(row.year),
            "accession_number": row.accession_number,
        }
        assert _get(ref_server, "/filings/items", same).json() == body  # what the documents' request answers


def test_filing_items_by_accession_number_take_it_without_dashes_and_check_what_else_is_given(ref_server):
    row = _filings().iloc[0]
    plain = _get(ref_server, "/filings/items", {"ticker": row.ticker, "accession_number": row.accession_number})
    bare = row.accession_number.replace("-", "")
    assert _get(ref_server, "/filings/items", {"ticker": row.ticker, "accession_number": bare}).json() == plain.json()
    other = "10-Q" if row.filing_type != "10-Q" else "10-K"
    wrong = _get(
        ref_server,
        "/filings/items",
        {"ticker": row.ticker, "accession_number": row.accession_number, "filing_type": other},
    )
    _problem(wrong, 404)
    assert row.accession_number in wrong.json()["message"]


def test_an_unknown_accession_number_is_a_404_problem(ref_server):
    r = _get(ref_server, "/filings/items", {"ticker": "AAPL", "accession_number": "0000000000-00-000000"})
    _problem(r, 404)
    assert r.json()["error"] == "Not Found" and "0000000000-00-000000" in r.json()["message"]
    nvda = _filings().query("ticker == 'NVDA'").iloc[0]  # another company's filing: said whose it is
    r = _get(ref_server, "/filings/items", {"ticker": "AAPL", "accession_number": nvda.accession_number})
    _problem(r, 404)
    assert "NVDA" in r.json()["message"]
    _problem(_get(ref_server, "/filings/items", {"ticker": "NOPE", "accession_number": nvda.accession_number}), 404)


def test_filing_items_without_accession_number_still_need_type_and_year(ref_server):
    for params in (
        {"ticker": "AAPL"},
        {"ticker": "AAPL", "filing_type": "10-K"},
        {"ticker": "AAPL", "year": 2024},
        {"accession_number": _filings().iloc[0].accession_number},
        {"ticker": "AAPL", "accession_number": " "},
    ):
        _problem(_get(ref_server, "/filings/items", params), 400)
    assert _get(ref_server, "/filings/items", {"ticker": "AAPL", "filing_type": "10-K", "year": 2024}).ok


def test_the_client_fetches_filing_items_by_accession_number(ref_client):
    row = _filings().iloc[0]
    df = ref_client.filing_items(row.ticker, accession_number=row.accession_number)
    assert len(df) and set(df["accession_number"].astype(str)) == {row.accession_number}
    with pytest.raises(fdkit.NotFoundError):
        ref_client.filing_items("AAPL", accession_number="0000000000-00-000000")


# -- 3. / and /redoc -----------------------------------------------------------------------------------------------
def test_the_root_sends_a_browser_to_the_docs_and_tells_a_client_where_they_are(ref_server):
    browser = requests.get(
        ref_server.base_url + "/",
        headers={"Accept": "text/html,application/xhtml+xml"},
        allow_redirects=False,
        timeout=30,
    )
    assert browser.status_code == 307 and browser.headers["location"] == "/docs"
    followed = requests.get(ref_server.base_url + "/", headers={"Accept": "text/html"}, timeout=30)
    assert followed.status_code == 200 and "swagger-ui" in followed.text
    r = requests.get(ref_server.base_url + "/", timeout=30)  # no key needed, as /docs
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    links = r.json()
    assert links["version"] == fdkit.__version__ and links["docs"] == "/docs"
    for name in ("docs", "redoc", "openapi"):
        assert requests.get(urljoin(ref_server.base_url, links[name]), timeout=30).status_code == 200, name


def test_redoc_and_what_it_loads_come_from_the_server_itself(ref_server):
    r = requests.get(ref_server.base_url + "/redoc", timeout=30)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert not re.search(r"https?://", r.text), "the page names another host (a CDN, Google fonts)"
    refs = re.findall(r'(?:src|href|spec-url)="([^"]+)"', r.text)
    kinds = {"redoc.standalone.js": "javascript", "favicon.png": "image/png", "openapi.json": "application/json"}
    assert {ref.rsplit("/", 1)[-1] for ref in refs} == set(kinds)
    for ref in refs:
        url = urljoin(ref_server.base_url + "/redoc", ref)
        assert urlsplit(url).netloc == urlsplit(ref_server.base_url).netloc, ref
        got = requests.get(url, timeout=30)
        assert got.status_code == 200 and kinds[ref.rsplit("/", 1)[-1]] in got.headers["content-type"], ref


CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed (.ci/run installs Debian's where it can)")
def test_redoc_renders_headless_with_every_operation(ref_server):
    out = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--virtual-time-budget=20000",
            "--dump-dom",
            ref_server.base_url + "/redoc",
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    shown = set(re.findall(r'data-section-id="operation/([^"]+)"', out.stdout))
    assert shown == set(CATALOG), sorted(set(CATALOG) - shown)
    assert "Financial Data Service (fdkit serve)" in out.stdout


# -- 4. fdkit serve says which datasets come from the installed data packages ---------------------------------------
def _serve_lines(tmp_path, *args, env=None):
    """``fdkit serve``'s startup lines (up to the generated key's), from a process stopped by its own id."""
    run_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    run_env.pop("FDKIT_SERVER_KEYS", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "fdkit.cli", "serve", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=tmp_path,
        env=run_env,
    )
    lines = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if "generated key" in line or len(lines) > 20:
                break
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return lines


def test_fdkit_serve_names_the_datasets_of_the_installed_data_packages(tmp_path):
    from fdkit.lake.extensions import data_packages
    from fdkit.lake.reader import LakeReader

    packages = data_packages()
    if not packages:
        pytest.skip("no data package (fdkit-history) is installed")
    lines = _serve_lines(tmp_path)
    assert re.match(r"fdkit serve: [1-9][0-9]* datasets from ", lines[0]), lines  # what .ci/run greps
    served = LakeReader(default_data_dir()).from_packages()
    assert served and "prices" not in served  # the bundled lake's own datasets are its own
    for package in set(served.values()):
        names = sorted(n for n, p in served.items() if p == package)
        (said,) = [line for line in lines if f"data package {package.distribution}" in line]
        assert said.startswith(
            f"fdkit serve: {len(names)} datasets from the installed data package {package} "
            f"({package.root}): {', '.join(names)}"
        )
        if (package.root / "prices").is_dir():  # its rows of a bundled dataset are said too
            assert said.endswith("; and rows of the bundled prices"), said
    assert any("fdkit-history" in line for line in lines) == any(p.distribution == "fdkit-history" for p in packages)


def test_fdkit_serve_over_a_lake_of_ones_own_says_the_packages_are_not_served(tmp_path):
    from fdkit.lake.extensions import data_packages
    from fdkit.lake.io import write_dataset

    lake = tmp_path / "lake"
    write_dataset(lake, "news", read_dataset(default_data_dir(), "news").head(3))
    lines = _serve_lines(tmp_path, "--data", str(lake))
    assert lines[0].startswith(f"fdkit serve: 1 datasets from {lake} on http://"), lines
    assert not any("datasets from the installed data package" in line for line in lines)
    if data_packages():
        assert any(line.endswith(f"is not served over {lake} (only over the bundled lake)") for line in lines)
    quiet = _serve_lines(tmp_path, env={"FDKIT_NO_EXTENSIONS": "1"})
    assert re.match(r"fdkit serve: [1-9][0-9]* datasets from ", quiet[0])
    assert not any("data package" in line for line in quiet), quiet
