"""As-reported statements (``/financials/*/as-reported``): the values a period's own filing reported.

The statement datasets hold one normalised row per period; ``statement_vintages`` holds every value each filing
reported. A period's as-reported statement is the set of values of the first filing that reported it (its 10-K or
10-Q; a later restatement is not "as reported" for that period): duration fields of the period for the income and
cash-flow statements, the instant at the period end for the balance sheet. Each value is one line item
``{label, full_label, value, children}``; the lake keeps no presentation linkbase, so the items are flat (no
children) and ``full_label`` is null.

Example:
    >>> from fdkit.lake import default_data_dir
    >>> from fdkit.server.store import Store
    >>> reports = as_reported(Store(default_data_dir()), "AAPL", "annual")
    >>> reports[0]["income_statement"]["line_items"][0]["label"]
    'Revenue'
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from fdkit.catalog.endpoints import Endpoint
from fdkit.catalog.params import ParamError
from fdkit.catalog.schema import BALANCE_FIELDS, CASH_FLOW_FIELDS, INCOME_FIELDS
from fdkit.frames.typed import to_records
from fdkit.server.handlers import Answer, _filter, _ticker, handles
from fdkit.server.store import Store

__all__ = ["as_reported", "STATEMENT_FIELDS_OF"]

#: the statements of an as-reported report and the fields each shows, in face order
STATEMENT_FIELDS_OF: dict[str, tuple[str, ...]] = {
    "income_statement": INCOME_FIELDS,
    "balance_sheet": BALANCE_FIELDS,
    "cash_flow_statement": CASH_FLOW_FIELDS,
}
_LABELS = {"ebit": "EBIT", "eps": "EPS"}


def label_of(field: str) -> str:
    """A line item's label from its field name (``net_cash_flow_from_operations`` -> ``Net cash flow from ...``)."""
    words = [_LABELS.get(w, w) for w in field.split("_")]
    text = " ".join(words)
    return text[:1].upper() + text[1:]


def as_reported(
    store: Store, ticker: str, period: str, q: dict[str, Any] | None = None, ep: Endpoint | None = None
) -> list[dict[str, Any]]:
    """Every as-reported report of a ticker and period, newest first.

    Args:
        store: the lake.
        ticker: the company.
        period: ``annual`` or ``quarterly``.
        q: the request (report-period filters), with ``ep`` the endpoint they belong to.
        ep: the endpoint.

    Returns:
        Reports: the statement header and ``income_statement``, ``balance_sheet``, ``cash_flow_statement``, each
        ``{"line_items": [...]}`` or ``None`` where the filing reported none of its fields.
    """
    v = store.rows("statement_vintages", ticker)
    if v.empty:
        return []
    own = v[(v["period"].astype("string") == period).fillna(False).to_numpy(dtype=bool)]
    first = own.groupby("report_period")["filing_date"].min().rename("anchor").reset_index()
    if q and ep is not None:
        first = _filter(first, ep, q)
    first = first.sort_values("report_period", ascending=False, kind="stable")
    stmts = store.rows("income_statements", ticker)
    stmts = stmts[(stmts["period"].astype("string") == period).fillna(False).to_numpy(dtype=bool)]
    heads = {
        r["report_period"]: r for r in to_records(stmts, ["report_period", "fiscal_period", "currency", "filing_url"])
    }
    facts = store.rows("company_facts", ticker)
    cik = str(facts["cik"].iloc[0]) if len(facts) and pd.notna(facts["cik"].iloc[0]) else None
    out = []
    for rp, anchor in zip(first["report_period"], first["anchor"], strict=True):
        day = rp.strftime("%Y-%m-%d")
        filed = v[(v["report_period"] == rp) & (v["filing_date"] == anchor)]
        dur = filed[(filed["period"].astype("string") == period).to_numpy(dtype=bool)]
        inst = filed[(filed["period"].astype("string") == "instant").to_numpy(dtype=bool)]
        values = {
            "duration": dict(zip(dur["field"].astype(str), dur["value"], strict=True)),
            "instant": dict(zip(inst["field"].astype(str), inst["value"], strict=True)),
        }
        accession = filed["accession_number"].dropna()
        acc = str(accession.iloc[0]) if len(accession) else None
        head = heads.get(day, {})
        url = head.get("filing_url") or _filing_index(cik, acc)
        rec: dict[str, Any] = {
            "ticker": ticker,
            "report_period": day,
            "fiscal_period": head.get("fiscal_period"),
            "period": period,
            "currency": head.get("currency") or "USD",
            "accession_number": acc,
            "filing_url": url,
            "filing_date": anchor.strftime("%Y-%m-%d"),
        }
        for statement, fields in STATEMENT_FIELDS_OF.items():
            found = values["instant" if statement == "balance_sheet" else "duration"]
            items: list[dict[str, Any]] = [
                {"label": label_of(f), "full_label": None, "value": float(found[f]), "children": []}
                for f in fields
                if f in found and pd.notna(found[f])
            ]
            rec[statement] = {"line_items": items} if items else None
        out.append(rec)
    return out


def _filing_index(cik: str | None, accession: str | None) -> str | None:
    """The EDGAR index page of a filing, from the filer's CIK and the accession number."""
    if not cik or not accession:
        return None
    return f"https://www.sec.gov/Archives/edgar/data/{int(cik)}/{accession.replace('-', '')}/{accession}-index.htm"


@handles(
    "as_reported_income_statements",
    "as_reported_balance_sheets",
    "as_reported_cash_flow_statements",
    "as_reported_financials",
)
def as_reported_answer(store: Store, ep: Endpoint, q: dict[str, Any]) -> Answer:
    """One statement's as-reported reports (``{header..., line_items}``), or all three per report."""
    ticker = _ticker(store, ep, q)
    if ticker is None:
        raise ParamError(f"{ep.path} needs a ticker or cik", "Missing parameter")
    reports = as_reported(store, ticker, q.get("period") or "annual", q, ep)
    statement = {
        "as_reported_income_statements": "income_statement",
        "as_reported_balance_sheets": "balance_sheet",
        "as_reported_cash_flow_statements": "cash_flow_statement",
    }.get(ep.name)
    if statement is not None:  # one statement: its line items beside the header
        keep = [r for r in reports if r[statement] is not None]
        header = [k for k in reports[0] if k not in STATEMENT_FIELDS_OF] if reports else []
        reports = [{**{k: r[k] for k in header}, "line_items": r[statement]["line_items"]} for r in keep]
    return Answer(records=reports)
