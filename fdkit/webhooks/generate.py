"""Events from lake rows: what the live service would have emitted when the data entered the lake.

Rules (each has a test):

* one filing-level event per filing (ticker, accession; ticker and filing day where the lake has no accession):
  every entry the filing gives belongs to it. A 10-K's event carries its annual entry, the fiscal Q4 it implies
  (FY minus nine months) and the TTM entries, TTM first; a 10-Q's carries its quarter, then the TTM entry. TTM
  entries have no form type (null). A Form 5 with both trades and holdings fires an ``insider_trades`` and an
  ``insider_ownership`` event with the same accession number; ownership events come only from Forms 3 and 5
  (and their amendments): Form 4 rows are trades; insider events go out once a day, in the early-morning (UTC)
  batch of the previous day's filings, so their effective date is the day after the filing and they go out
  first that day, before the day's other events (:func:`delivery_order`);
* segments: one event per filing and statement (``income_statement_segments`` ...), records nested as the
  ``/financials/*/segments`` endpoints nest them, without a ``filing_date`` (the header carries it); the form type
  is named by the period (the lake keeps none);
* release-level KPIs (``forward_guidance``, ``non_gaap_metrics``, ``operating_kpis``): one event per (ticker,
  report period) with the company's sector;
* earnings: one event per (ticker, report period, source form): a quarter fires twice where its release day is
  known (the 8-K of that day, then the 10-Q/10-K); both carry the record ``/earnings`` serves for the quarter
  (every figure and signal, field for field), the 8-K under its own filing identity (``source_type`` 8-K,
  ``filing_date``/``filing_datetime``/``filing_window`` of the release, no accession or URL: no source names them);
* inflation: one event per month, header dated the first of the month, one entry per series of the month;
* interest rates: one event per (bank, decision date) carrying ``date`` and a single entry equal to that bank's
  snapshot row then; a revision of an already-published (bank, date) fires nothing;
* labor: one event per (release, date): ``jobs_report`` and ``job_openings`` (monthly), ``jobless_claims``
  (weekly, dated the week its initial claims cover; continued claims and insured unemployment a week earlier);
  each entry carries its value and its changes from the prior period and from a year earlier;
* yield curve: one event per date, the curve under ``yield_curve`` with one key per tenor;
* filing items: one ``filing_items.metadata.created`` per filing (two of one type on one day are two events, each
  under its accession) with the items ``/filings/items`` accepts and a ``url`` on the service's public base.

Every envelope's ``created`` is the Unix time the event was recorded (made), not a time derived from the data's
date: the payload carries the dates.

Event ids are UUIDv5 of the event's identity, so replaying the same window twice yields the same ids (receivers
deduplicate them).

Example:
    >>> from fdkit.lake import default_data_dir
    >>> evs = events_from_lake(default_data_dir(), since="2024-11-01", until="2024-11-01")
    >>> sorted({e["type"].split(".")[0] for e in evs})[:4]
    ['balance_sheets', 'cash_flow_statements', 'earnings', 'filing_items']
"""

from __future__ import annotations

import datetime as dt
import os
import uuid
from collections.abc import Iterable
from typing import Any, cast
from urllib.parse import urlencode

import pandas as pd

from fdkit.catalog.endpoints import CATALOG
from fdkit.catalog.schema import OWNERSHIP_FORMS, YIELD_TENORS, fields_of
from fdkit.catalog.shapes import SHAPES
from fdkit.frames.nested import signal_entry
from fdkit.frames.typed import to_records
from fdkit.lake.reader import LakeReader
from fdkit.webhooks.events import make_event

__all__ = ["events_from_lake", "events_for_rows", "latest_events", "datasets_of", "delivery_order", "NAMESPACE"]

NAMESPACE = uuid.UUID("6f1c9a52-3a0e-4d5b-9a51-0f7d2c7b8e11")
_STATEMENTS = ("income_statements", "balance_sheets", "cash_flow_statements", "financial_metrics")
_PRIMARY = {"10-K": "annual", "10-K/A": "annual", "10-Q": "quarterly", "10-Q/A": "quarterly"}


def _eid(*parts: Any) -> str:
    return str(uuid.uuid5(NAMESPACE, "|".join(str(p) for p in parts)))


def _text_or_none(value: object) -> str | None:
    """A group key as text, or ``None`` where it is missing (``None``, NaN, ``pd.NA``)."""
    return None if value is None or value is pd.NA or (isinstance(value, float) and value != value) else str(value)


def _day(value: Any) -> str:
    return pd.Timestamp(value).strftime("%Y-%m-%d")


#: insider filings are sent once a day, early in the morning (UTC), in a batch of the previous day's filings
INSIDER_BATCH_LAG = pd.Timedelta(days=1)
_ORDER = {"annual": {"ttm": 0, "annual": 1, "quarterly": 2}, "quarterly": {"quarterly": 0, "ttm": 1, "annual": 2}}


def _filings(df: pd.DataFrame) -> Iterable[tuple[tuple[Any, Any, Any], pd.DataFrame]]:
    """Rows grouped by filing: (ticker, accession, filing date); rows without an accession by ticker and day."""
    df = df.dropna(subset=["filing_date"])
    keys = ["ticker", "accession_number", "filing_date"]
    yield from df.groupby(keys, observed=True, sort=True, dropna=False)  # type: ignore[misc]


def _statement_events(name: str, df: pd.DataFrame, livemode: bool) -> list[tuple[str, dict[str, Any]]]:
    """One event per filing with every entry the filing gives (its period, a 10-K's derived Q4, TTM entries)."""
    out = []
    fields = fields_of(name)
    for (ticker, accession, filed), g in _filings(df):
        forms = g["form_type"].dropna()
        form = str(forms.iloc[0]) if len(forms) else "10-K"
        rank = _ORDER[_PRIMARY.get(form, "annual")]
        g = g.assign(_rank=g["period"].astype(str).map(rank).fillna(3))
        g = g.sort_values(["_rank", "report_period"], ascending=[True, False], kind="stable")
        day = _day(filed)
        acc = _text_or_none(accession)
        payload = {
            "ticker": str(ticker),
            "accession_number": acc,
            "filing_date": day,
            "form_type": form,
            name: to_records(g, fields),
        }
        eid = _eid(name, ticker, acc, day)
        out.append((day, make_event(name, payload, livemode=livemode, event_id=eid)))
    return out


_SEGMENT_FAMILY = {
    "income_statement": "income_statement_segments",
    "balance_sheet": "balance_sheet_segments",
    "cash_flow_statement": "cash_flow_statement_segments",
}


def _without_filing_date(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Segment entries as events carry them: the filing date is the event header's, never an entry's."""
    return [{k: v for k, v in e.items() if k != "filing_date"} for e in entries]


def _segment_events(df: pd.DataFrame, livemode: bool) -> list[tuple[str, dict[str, Any]]]:
    """One event per filing and statement; the lake keeps no form type for segments, so the period names it."""
    out = []
    shape = SHAPES["line_items"]
    for (ticker, accession, filed), g in _filings(df):
        for statement, rows in g.groupby("statement", observed=True, sort=True):
            family = _SEGMENT_FAMILY[str(statement)]
            rows = rows.sort_values("report_period", ascending=False, kind="stable")
            annual = (rows["period"].astype(str) == "annual").any()
            day = _day(filed)
            acc = _text_or_none(accession)
            payload = {
                "ticker": str(ticker),
                "accession_number": acc,
                "filing_date": day,
                "form_type": "10-K" if annual else "10-Q",
                family: _without_filing_date(shape.nest(to_records(rows, shape.row_fields()))),  # type: ignore[attr-defined]
            }
            out.append((day, make_event(family, payload, livemode=livemode, event_id=_eid(family, ticker, acc, day))))
    return out


#: KPI datasets -> their release-level event family
_KPI_FAMILY = {"kpi_guidance": "forward_guidance", "kpi_non_gaap": "non_gaap_metrics", "kpi_metrics": "operating_kpis"}


def _kpi_events(dataset: str, df: pd.DataFrame, facts: pd.DataFrame, livemode: bool) -> list[tuple]:
    """One release-level event per (ticker, report period): the lake keeps no release date, so the period dates it."""
    out = []
    family = _KPI_FAMILY[dataset]
    sectors = dict(zip(facts["ticker"].astype(str), facts["sector"], strict=True)) if "sector" in facts.columns else {}
    for (ticker, period), g in df.dropna(subset=["report_period"]).groupby(
        ["ticker", "report_period"], observed=True, sort=True
    ):
        day = _day(period)
        records = to_records(g, [f for f in fields_of(dataset) if f != "ticker"])
        sector = _text_or_none(sectors.get(str(ticker)))
        payload = {
            "ticker": str(ticker),
            "accession_number": None,
            "sector": sector,
            "report_period": day,
            family: records,
        }
        out.append((day, make_event(family, payload, livemode=livemode, event_id=_eid(family, ticker, day))))
    return out


#: labour releases and the lake series each publishes (one event per release and date)
LABOR_RELEASES: dict[str, tuple[str, ...]] = {
    "jobs_report": (
        "average_hourly_earnings",
        "labor_force_participation_rate",
        "nonfarm_payrolls",
        "u6_unemployment_rate",
        "unemployment_rate",
    ),
    "job_openings": ("job_openings",),
    "jobless_claims": ("continued_claims", "initial_jobless_claims", "insured_unemployment_rate"),
}
_RELEASE_OF = {series: release for release, names in LABOR_RELEASES.items() for series in names}
#: series a release publishes for the week before the one it is dated (the weekly claims release's continued claims)
_WEEK_BEFORE = frozenset({"continued_claims", "insured_unemployment_rate"})


def _labor_events(df: pd.DataFrame, livemode: bool) -> list[tuple]:
    """One event per (release, date): the jobs report and job openings monthly, jobless claims weekly.

    A claims event is dated the week its initial claims cover; its continued claims and insured unemployment
    entries keep their own date, a week earlier, as the release publishes them.
    """
    out = []
    df = df.assign(_release=df["series"].astype(str).map(_RELEASE_OF)).dropna(subset=["_release"])
    lag = df["series"].astype(str).isin(_WEEK_BEFORE).to_numpy()
    df = df.assign(_day=df["date"].where(~lag, df["date"] + pd.Timedelta(weeks=1)))
    for (release, day), g in df.groupby(["_release", "_day"], sort=True):
        d = _day(day)
        payload = {"release": str(release), "date": d, "labor": to_records(g.sort_values("series"), fields_of("labor"))}
        out.append((d, make_event("labor", payload, livemode=livemode, event_id=_eid("labor", release, d))))
    return out


def _insider_events(name: str, df: pd.DataFrame, livemode: bool) -> list[tuple[str, dict[str, Any]]]:
    """One event per filing, sent in the next morning's daily batch (effective the day after the filing)."""
    out = []
    fields = fields_of(name)
    if name == "insider_ownership":
        df = df[df["form_type"].astype("string").isin(OWNERSHIP_FORMS).fillna(False)]
    # a filing is (ticker, accession, form, filing date): some bundled ownership documents have no accession
    keys = ["ticker", "accession_number", "form_type", "filing_date"]
    records = to_records(df, fields)  # once for every row (a frame per filing: 60,000 small frames), then sliced
    groups = df.groupby(keys, observed=True, sort=True, dropna=False).indices
    for key, rows in groups.items():
        ticker, accession, form, filed = cast(tuple[Any, Any, Any, Any], key)
        acc = _text_or_none(accession)
        day = _day(filed)
        head = {"ticker": str(ticker), "accession_number": acc, "filing_date": day, "form_type": str(form)}
        payload = {**head, name: [records[i] for i in rows]}
        out.append(
            (
                _day(pd.Timestamp(day) + INSIDER_BATCH_LAG),
                make_event(name, payload, livemode=livemode, event_id=_eid(name, ticker, acc, form, _day(filed))),
            )
        )
    return out


def _session(accepted: str | None) -> str | None:
    """The 2026 document's ``filing_window`` of an acceptance time (New York): None where the time is unknown.

    Example:
        >>> _session("2024-10-31T16:30:21-04:00"), _session("2024-11-02T08:00:00-04:00"), _session(None)
        ('AFTER_HOURS', 'WEEKEND', None)
    """
    if not accepted:
        return None
    at = pd.Timestamp(accepted)
    at = (at.tz_localize("America/New_York") if at.tzinfo is None else at).tz_convert("America/New_York")
    minutes = at.hour * 60 + at.minute
    if at.day_of_week >= 5:
        return "WEEKEND"
    if 4 * 60 <= minutes < 9 * 60 + 30:
        return "PRE_MARKET"
    return "DURING_MARKET" if 9 * 60 + 30 <= minutes < 16 * 60 else "AFTER_HOURS"


def _release_record(row: dict[str, Any]) -> dict[str, Any]:
    """The 8-K of a quarterly report's release day: the record ``/earnings`` serves for the quarter, as the 8-K's.

    Its figures and signals are the endpoint's record of that report period (the sources hold the release's date,
    not its exhibit, and a release's figures are those the report then files); its filing identity is the 8-K's:
    ``source_type`` 8-K, dated and timed by the release, its window from the release time, and no accession or URL
    (no source names the 8-K's).
    """
    return {
        **row,
        "source_type": "8-K",
        "filing_date": row["release_date"],
        "filing_datetime": row.get("release_datetime"),
        "filing_window": _session(row.get("release_datetime")),
        "accession_number": None,
        "filing_url": None,
    }


def _earnings_events(df: pd.DataFrame, livemode: bool) -> list[tuple[str, dict[str, Any]]]:
    """One event per (ticker, report period, form): the 10-Q/10-K, and before it the 8-K of its release day.

    A release comes from the report's ``release_date`` unless the lake holds that quarter's 8-K record itself (a
    landed release event): then that record is the release. Signals travel as ``/earnings`` serves them, and only
    where one fires.
    """
    out = []
    df = df.dropna(subset=["filing_date"])
    rows = to_records(df, fields_of("earnings"))
    fired = df["signals"].tolist() if "signals" in df.columns else [None] * len(rows)
    for row, signals in zip(rows, fired, strict=True):
        if signals is not None and len(signals):
            row["signals"] = [signal_entry(s) for s in signals]
    landed = {(r["ticker"], r["report_period"]) for r in rows if r.get("source_type") == "8-K"}
    releases = [
        _release_record(r)
        for r in rows
        if r.get("release_date")
        and r.get("source_type") in ("10-Q", "10-K")
        and r["release_date"] <= r["filing_date"]
        and (r["ticker"], r["report_period"]) not in landed
    ]
    for item, record in zip(
        SHAPES[CATALOG["earnings"].shape].nest([*releases, *rows]), [*releases, *rows], strict=True
    ):
        if item.get("source_type") not in ("8-K", "10-Q", "10-K"):
            continue
        if record.get("signals"):
            item["signals"] = record["signals"]
        eid = _eid("earnings", item["ticker"], item["report_period"], item["source_type"])
        out.append((item["filing_date"], make_event("earnings", item, livemode=livemode, event_id=eid)))
    return out


def _rate_events(df: pd.DataFrame, livemode: bool, published: set[tuple[str, str]]) -> list[tuple[str, dict]]:
    out = []
    for rec in to_records(df.sort_values(["bank", "date"]), fields_of("interest_rates")):
        key = (rec["bank"], rec["date"])
        if key in published:  # a revision of a published date fires nothing
            continue
        published.add(key)
        payload = {"bank": rec["bank"], "date": rec["date"], "interest_rates": [rec]}
        out.append(
            (
                rec["date"],
                make_event("interest_rates", payload, livemode=livemode, event_id=_eid("interest_rates", *key)),
            )
        )
    return out


def _inflation_events(df: pd.DataFrame, livemode: bool) -> list[tuple[str, dict]]:
    out = []
    for day, g in df.groupby("date", sort=True):
        d = _day(day)
        if not d.endswith("-01"):
            continue
        payload = {"date": d, "inflation": to_records(g.sort_values("series"), fields_of("inflation"))}
        out.append((d, make_event("inflation", payload, livemode=livemode, event_id=_eid("inflation", d))))
    return out


def _curve_events(df: pd.DataFrame, livemode: bool) -> list[tuple[str, dict]]:
    out = []
    for rec in to_records(df, ["date", *YIELD_TENORS]):
        payload = {"date": rec["date"], "yield_curve": rec}
        out.append(
            (
                rec["date"],
                make_event("yield_curve", payload, livemode=livemode, event_id=_eid("yield_curve", rec["date"])),
            )
        )
    return out


def _filing_item_events(df: pd.DataFrame, facts: pd.DataFrame, base_url: str, livemode: bool) -> list[tuple]:
    out = []
    ciks = {str(t): str(c) for t, c in zip(facts["ticker"], facts["cik"], strict=True) if isinstance(c, str)}
    keys = ["ticker", "filing_type", "filing_date", "accession_number"]
    for (ticker, ftype, filed, accession), g in df.groupby(keys, observed=True, sort=True, dropna=False):
        cik = ciks.get(str(ticker))
        if cik is None:
            continue
        d = _day(filed)
        acc = _text_or_none(accession)  # two filings of one type on one day: two events, each its accession
        query = {"ticker": str(ticker), "filing_type": str(ftype), "year": int(d[:4])}
        if pd.notna(g["quarter"].iloc[0]):
            query["quarter"] = int(g["quarter"].iloc[0])
        if acc:
            query["accession_number"] = acc
        payload = {
            "ticker": str(ticker),
            "cik": cik.zfill(10),
            "filing_type": str(ftype),
            "accession_number": acc,
            "filing_date": d,
            "available_items": sorted({str(n) for n in g["number"]}),
            "url": f"{base_url.rstrip('/')}/filings/items?{urlencode(query)}",
        }
        eid = _eid("filing_items", ticker, ftype, d, *([acc] if acc else []))  # the id of old: unchanged without one
        out.append((d, make_event("filing_items.metadata", payload, livemode=livemode, event_id=eid)))
    return out


def events_for_rows(
    dataset: str,
    df: pd.DataFrame,
    *,
    livemode: bool = True,
    base_url: str = "",
    facts: pd.DataFrame | None = None,
    published: set[tuple[str, str]] | None = None,
) -> list[tuple[str, dict[str, Any]]]:
    """Events for new rows of one lake dataset (an ingest, or a replay window).

    Args:
        dataset: lake dataset name.
        df: its rows (typed, as :func:`fdkit.lake.read_dataset` gives them).
        livemode: false for test events.
        base_url: the service base for ``filing_items`` URLs.
        facts: company facts (CIKs) for filing-item events.
        published: (bank, date) pairs already published (revisions fire nothing); updated in place.

    Returns:
        ``(effective date, envelope)`` pairs.
    """
    found = _events_for_rows(dataset, df, livemode=livemode, base_url=base_url, facts=facts, published=published)
    if not livemode:  # test events never share an id with the live event of the same data
        for _, event in found:
            event["id"] = str(uuid.uuid5(NAMESPACE, "test|" + event["id"]))
    return found


def _events_for_rows(
    dataset: str,
    df: pd.DataFrame,
    *,
    livemode: bool,
    base_url: str,
    facts: pd.DataFrame | None,
    published: set[tuple[str, str]] | None,
) -> list[tuple]:
    if df.empty:
        return []
    if dataset in _STATEMENTS:
        return _statement_events(dataset, df, livemode)
    if dataset in ("insider_trades", "insider_ownership"):
        return _insider_events(dataset, df, livemode)
    if dataset == "earnings":
        return _earnings_events(df, livemode)
    if dataset == "interest_rates":
        return _rate_events(df, livemode, published if published is not None else set())
    if dataset == "inflation":
        return _inflation_events(df, livemode)
    if dataset == "labor":
        return _labor_events(df, livemode)
    if dataset == "segmented_financials":
        return _segment_events(df, livemode)
    if dataset in _KPI_FAMILY:
        return _kpi_events(dataset, df, facts if facts is not None else pd.DataFrame(columns=["ticker"]), livemode)
    if dataset == "yield_curve":
        return _curve_events(df, livemode)
    if dataset == "filing_items":
        return _filing_item_events(
            df, facts if facts is not None else pd.DataFrame(columns=["ticker", "cik"]), base_url, livemode
        )
    return []


_DATE_COLUMN = {
    "interest_rates": "date",
    "inflation": "date",
    "labor": "date",
    "yield_curve": "date",
    **{k: "report_period" for k in _KPI_FAMILY},
}
#: every dataset events are generated from (all 18 event types)
REPLAYED = (
    *_STATEMENTS,
    "segmented_financials",
    "insider_trades",
    "insider_ownership",
    "earnings",
    *_KPI_FAMILY,
    "interest_rates",
    "inflation",
    "labor",
    "yield_curve",
    "filing_items",
)


def datasets_of(event_type: str) -> tuple[str, ...]:
    """The lake datasets whose rows make events of ``event_type`` (what :func:`events_from_lake` must read).

    Args:
        event_type: one of :data:`fdkit.webhooks.events.EVENT_TYPES`.

    Returns:
        Dataset names of :data:`REPLAYED` (empty for an unknown type).

    Example:
        >>> datasets_of("operating_kpis.created"), datasets_of("income_statement_segments.created")
        (('kpi_metrics',), ('segmented_financials',))
        >>> datasets_of("filing_items.metadata.created")
        ('filing_items',)
    """
    family = event_type.removesuffix(".created")
    if family in _SEGMENT_FAMILY.values():
        return ("segmented_financials",)
    kpi = tuple(d for d, f in _KPI_FAMILY.items() if f == family)
    if kpi:
        return kpi
    name = "filing_items" if family == "filing_items.metadata" else family
    return (name,) if name in REPLAYED else ()


_INSIDER = ("insider_trades", "insider_ownership")
#: the early-morning (UTC) batch: insider events go out first on their effective day, before that day's others
EARLY_BATCH = frozenset(f"{name}.created" for name in _INSIDER)


def delivery_order(item: tuple[str, dict[str, Any]]) -> tuple[str, int, str, str]:
    """The order events go out in: effective date, the early-morning batch first, then type and id.

    Args:
        item: ``(effective date, envelope)``.

    Returns:
        A sort key.

    Example:
        >>> trade = ("2024-11-05", {"type": "insider_trades.created", "id": "b"})
        >>> balance = ("2024-11-05", {"type": "balance_sheets.created", "id": "a"})
        >>> [e["type"] for _, e in sorted([balance, trade], key=delivery_order)]
        ['insider_trades.created', 'balance_sheets.created']
    """
    day, event = item
    return day, 0 if event["type"] in EARLY_BATCH else 1, event["type"], event["id"]


def _effective(name: str, df: pd.DataFrame) -> pd.Series:
    """Each row's effective date.

    Its date column; a day later for an insider filing (the next morning's batch), a week later for a claims
    release's week-before series.
    """
    col = _DATE_COLUMN.get(name, "filing_date")
    if col not in df.columns:
        return pd.Series(pd.NaT, index=df.index, dtype="datetime64[ns]")
    lag = pd.Series(pd.Timedelta(0), index=df.index)
    if name in _INSIDER:
        lag[:] = INSIDER_BATCH_LAG
    if name == "labor" and "series" in df.columns:  # a week-before series belongs to the next week's release
        lag = lag.mask(df["series"].astype(str).isin(_WEEK_BEFORE), pd.Timedelta(weeks=1))
    return pd.to_datetime(df[col]) + lag


def _in_window(
    name: str, df: pd.DataFrame, since: str | None, until: str | None, published: set[tuple[str, str]]
) -> pd.DataFrame:
    """The rows of one dataset whose events fall in ``[since, until]`` (effective dates).

    Interest-rate decisions before ``since`` are added to ``published`` (a revision of one fires nothing).
    """
    col = _DATE_COLUMN.get(name, "filing_date")
    if col not in df.columns:
        return df
    day = _effective(name, df)
    keep = day.notna()
    if since:  # the window is of effective dates: an insider filing's is its batch's
        keep &= day >= pd.Timestamp(since)
    if until:
        keep &= day <= pd.Timestamp(until)
    if name == "earnings" and "release_date" in df.columns:  # a release (8-K) inside, its report after
        keep |= df["release_date"].between(pd.Timestamp(since or "1900-01-01"), pd.Timestamp(until or "2999-12-31"))
    if name == "interest_rates" and since:  # earlier decisions count as published
        for rec in to_records(df[df[col] < pd.Timestamp(since)], ["bank", "date"]):
            published.add((rec["bank"], rec["date"]))
    return df[keep]


def events_from_lake(
    root: str | os.PathLike[str],
    *,
    since: str | dt.date | None = None,
    until: str | dt.date | None = None,
    datasets: Iterable[str] = REPLAYED,
    livemode: bool = True,
    base_url: str = "http://127.0.0.1:8000",
) -> list[dict[str, Any]]:
    """Walk a lake in filing-date order and return the events the live service would have emitted.

    Args:
        root: the lake.
        since: first effective date (inclusive; ``YYYY-MM-DD``, any spelling pandas reads, or a date).
        until: last effective date (inclusive).
        datasets: which datasets to replay.
        livemode: false for test events.
        base_url: the service base for ``filing_items`` URLs.

    Returns:
        Envelopes in :func:`delivery_order`: by effective date, each day's early-morning insider batch first,
        then by type and id.

    Example:
        >>> from fdkit.lake import default_data_dir
        >>> day = [e["type"] for e in events_from_lake(default_data_dir(), since="2024-08-02", until="2024-08-02")]
        >>> day[0], day[-1]  # the insider filings of 2024-08-01 first, in the morning's batch
        ('insider_trades.created', 'income_statements.created')
    """
    lake = LakeReader(root)
    since, until = (None if d is None else _day(d) for d in (since, until))  # '2024-1-1', a date: one spelling
    facts = lake.read("company_facts")
    found: list[tuple[str, dict[str, Any]]] = []
    published: set[tuple[str, str]] = set()
    for name in datasets:
        df = _in_window(name, lake.read(name), since, until, published)
        found.extend(events_for_rows(name, df, livemode=livemode, base_url=base_url, facts=facts, published=published))
    found = [(d, e) for d, e in found if (not since or d >= since) and (not until or d <= until)]
    found.sort(key=delivery_order)
    return [e for _, e in found]


def latest_events(
    root: str | os.PathLike[str],
    event_types: Iterable[str],
    *,
    livemode: bool = False,
    base_url: str = "http://127.0.0.1:8000",
) -> dict[str, dict[str, Any]]:
    """The newest event of each type the lake gives, made from the lake's most recent rows only.

    The same event :func:`events_from_lake` would list last of its type, without generating the others: each
    dataset is replayed over a window of its latest effective dates, widened (1, 4, 16, ... dates) until every
    type asked of it has an event or the window holds all its rows. ``fdkit events test`` sends these.

    Args:
        root: the lake.
        event_types: types of :data:`fdkit.webhooks.events.EVENT_TYPES`.
        livemode: false for test events (the default).
        base_url: the service base for ``filing_items`` URLs.

    Returns:
        type -> envelope; a type the lake has no data for is absent.

    Example:
        >>> from fdkit.lake import default_data_dir
        >>> got = latest_events(default_data_dir(), ["yield_curve.created"])
        >>> got["yield_curve.created"]["data"]["object"]["date"], got["yield_curve.created"]["livemode"]
        ('2023-11-30', False)
    """
    wanted = list(dict.fromkeys(event_types))
    lake = LakeReader(root)
    facts = lake.read("company_facts")
    latest: dict[str, dict[str, Any]] = {}
    for name in dict.fromkeys(d for t in wanted for d in datasets_of(t)):
        types = {t for t in wanted if name in datasets_of(t)}
        latest.update(_latest_of(name, lake.read(name), types, livemode, base_url, facts))
    return latest


def _latest_of(
    name: str, df: pd.DataFrame, types: set[str], livemode: bool, base_url: str, facts: pd.DataFrame
) -> dict[str, dict[str, Any]]:
    """The newest event of each of ``types`` one dataset gives, over windows of its latest dates."""
    days = _effective(name, df)
    if name == "earnings" and "release_date" in df.columns:  # a release's day is an effective date too
        days = pd.concat([days, pd.to_datetime(df["release_date"])])
    distinct = sorted(days.dropna().unique(), reverse=True)
    latest: dict[str, dict[str, Any]] = {}
    count = 1
    while distinct:
        since = _day(distinct[min(count, len(distinct)) - 1])
        published: set[tuple[str, str]] = set()
        rows = _in_window(name, df, since, None, published)
        found = events_for_rows(name, rows, livemode=livemode, base_url=base_url, facts=facts, published=published)
        found = sorted(((d, e) for d, e in found if d >= since and e["type"] in types), key=delivery_order)
        latest = {e["type"]: e for _, e in found}  # in delivery order: the last of a type wins
        if set(latest) == types or count >= len(distinct):
            break
        count *= 4
    return latest
