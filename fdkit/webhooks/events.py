"""Webhook event models: the envelope and the payloads of all 18 event types.

Envelope: ``{"id": uuid, "type": str, "api_version": str, "livemode": bool, "created": unix seconds,
"data": {"object": payload}}``. Payload families:

* filing-level (``balance_sheets``, ``balance_sheet_segments``, ``cash_flow_statements``,
  ``cash_flow_statement_segments``, ``financial_metrics``, ``income_statements``, ``income_statement_segments``,
  ``insider_ownership``, ``insider_trades``): ``ticker``, ``accession_number``, ``filing_date``, ``form_type`` and
  the dataset's array under its own name;
* release-level (``forward_guidance``, ``non_gaap_metrics``, ``operating_kpis``): ``ticker``,
  ``accession_number``, ``sector``, ``report_period`` and the array;
* ``earnings``: one earnings record, ``source_type`` 8-K, 10-Q or 10-K;
* print-level: ``inflation`` (``date`` = first of the month, ``inflation`` = one entry per series of the
  release, with ``change_1m_pct``/``change_12m_pct``), ``interest_rates`` (``bank``, ``date`` and one entry equal
  to that bank's snapshot row), ``labor`` (``release``, ``date``, ``labor``), ``yield_curve`` (``date`` and the
  curve under ``yield_curve``, one key per tenor, null where not published: the ``/macro/yield-curve/snapshot``
  record);
* ``filing_items.metadata.created``: ``ticker``, ``cik`` (10 digits), ``filing_type`` (``10-K``, ``10-Q``, ``8-K``
  or an amendment of one), ``accession_number``, ``filing_date``, ``available_items`` (exactly the ``item`` values
  ``/filings/items`` accepts), ``url`` (a ready ``/filings/items`` request).

Parsing is liberal where the spec allows: ``filing_date``/``report_period`` may be null, amended forms (``10-K/A``)
are accepted, unknown fields (of the envelope or a payload) are kept, and a yield curve sent flat (tenors at the top
level, as older senders do) is read as well as one under its key.

Event types are ``<family>.created`` (and ``filing_items.metadata.created``). ``Event.frame()`` returns the same
typed frame the matching endpoint function returns.

Example:
    >>> e = Event.model_validate({"id": "00000000-0000-4000-8000-000000000001", "type": "interest_rates.created",
    ...     "api_version": API_VERSION, "livemode": False, "created": 1700000000, "data": {"object": {"bank": "FED",
    ...     "date": "2024-09-19", "interest_rates": [{"bank": "FED", "date": "2024-09-19", "name": "x",
    ...     "rate": 4.875}]}}})
    >>> e.frame()["rate"].tolist()
    [4.875]
"""

from __future__ import annotations

import re
import time
import uuid
from typing import Annotated, Any, Literal

import pandas as pd
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    create_model,
    field_validator,
    model_validator,
)

from fdkit.catalog.endpoints import FILING_ITEMS_8K, FILING_ITEMS_10K, FILING_ITEMS_10Q
from fdkit.catalog.schema import YIELD_TENORS
from fdkit.frames.typed import to_frame

__all__ = ["API_VERSION", "EVENT_TYPES", "Event", "make_event", "parse_event", "example_payload", "ValidationError"]

API_VERSION = "2026-01-01"

FILING_LEVEL = (
    "balance_sheets",
    "balance_sheet_segments",
    "cash_flow_statements",
    "cash_flow_statement_segments",
    "financial_metrics",
    "income_statements",
    "income_statement_segments",
    "insider_ownership",
    "insider_trades",
)
RELEASE_LEVEL = ("forward_guidance", "non_gaap_metrics", "operating_kpis")

#: event family -> (endpoint whose frame ``Event.frame()`` returns, array key in the payload)
FAMILIES: dict[str, tuple[str, str | None]] = {
    **{
        f: (f, f)
        for f in (
            "balance_sheets",
            "cash_flow_statements",
            "financial_metrics",
            "income_statements",
            "insider_ownership",
            "insider_trades",
        )
    },
    "balance_sheet_segments": ("balance_sheet_segments", "balance_sheet_segments"),
    "cash_flow_statement_segments": ("cash_flow_statement_segments", "cash_flow_statement_segments"),
    "income_statement_segments": ("income_statement_segments", "income_statement_segments"),
    "forward_guidance": ("kpi_guidance", "forward_guidance"),
    "non_gaap_metrics": ("kpi_non_gaap", "non_gaap_metrics"),
    "operating_kpis": ("kpi_metrics", "operating_kpis"),
    "earnings": ("earnings", None),
    "inflation": ("inflation_snapshot", "inflation"),
    "interest_rates": ("interest_rates", "interest_rates"),
    "labor": ("labor_snapshot", "labor"),
    "yield_curve": ("yield_curve_snapshot", None),
    "filing_items.metadata": ("filings", None),
}

EVENT_TYPES: tuple[str, ...] = tuple(f"{f}.created" for f in FAMILIES)
if len(EVENT_TYPES) != 18:  # pragma: no cover - the table above is the spec's list
    raise RuntimeError(f"expected the spec's 18 webhook event types, have {len(EVENT_TYPES)}")

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_ITEMS = {"10-K": FILING_ITEMS_10K, "10-Q": FILING_ITEMS_10Q, "8-K": FILING_ITEMS_8K}


def _check_date(v: Any) -> Any:
    if v is not None and not (isinstance(v, str) and _DATE.match(v)):
        raise ValueError(f"not a YYYY-MM-DD date: {v!r}")
    return v


class _Payload(BaseModel):
    model_config = ConfigDict(extra="allow")


class FilingPayload(_Payload):
    """Header of a filing-level event; the array is an extra field named after the family."""

    ticker: str
    accession_number: str | None = None
    filing_date: str | None = None
    form_type: str | None = None

    _check = field_validator("filing_date")(_check_date)


class ReleasePayload(_Payload):
    """Header of a release-level event."""

    ticker: str
    accession_number: str | None = None
    sector: str | None = None
    report_period: str | None = None

    _check = field_validator("report_period")(_check_date)


class EarningsPayload(_Payload):
    """One earnings record."""

    ticker: str
    report_period: str | None = None
    source_type: Literal["8-K", "10-Q", "10-K"]
    filing_date: str | None = None
    accession_number: str | None = None
    quarterly: dict[str, Any] = Field(default_factory=dict)
    annual: dict[str, Any] = Field(default_factory=dict)

    _check = field_validator("report_period", "filing_date")(_check_date)


class InflationPayload(_Payload):
    """An inflation print: the header date is the first of the month."""

    date: str
    inflation: list[dict[str, Any]]

    @field_validator("date")
    @classmethod
    def _first_of_month(cls, v: str) -> str:
        _check_date(v)
        if not v.endswith("-01"):
            raise ValueError("an inflation print is dated the first of its month")
        return v


class InterestRatesPayload(_Payload):
    """A policy-rate decision: one entry, equal to the bank's snapshot row."""

    bank: str
    date: str | None = None
    interest_rates: list[dict[str, Any]] = Field(min_length=1, max_length=1)

    _check = field_validator("date")(_check_date)


class LaborPayload(_Payload):
    """A labour-market release: ``jobs_report``, ``job_openings`` or ``jobless_claims`` (dated the week it covers)."""

    release: str
    date: str
    labor: list[dict[str, Any]]

    _check = field_validator("date")(_check_date)


#: one curve: ``date`` and one optional float per tenor (null where not published)
YieldCurve = create_model(  # type: ignore[call-overload]  # one field per tenor, from the schema table
    "YieldCurve",
    __config__=ConfigDict(extra="allow"),
    date=(Annotated[str, AfterValidator(_check_date)], ...),
    **{t: (float | None, None) for t in YIELD_TENORS},
)


class YieldCurvePayload(_Payload):
    """A yield-curve print: ``date`` and the curve under ``yield_curve`` (a flat curve is read as well)."""

    date: str | None = None
    yield_curve: YieldCurve  # type: ignore[valid-type]

    @model_validator(mode="before")
    @classmethod
    def _flat(cls, data: Any) -> Any:
        if isinstance(data, dict) and "yield_curve" not in data:  # tenors at the top level (older senders)
            return {"date": data.get("date"), "yield_curve": data}
        return data

    def curve(self) -> dict[str, Any]:
        """The curve as a record (date and one key per tenor)."""
        return self.yield_curve.model_dump()  # type: ignore[attr-defined]


class FilingItemsMetadata(_Payload):
    """A filing whose items can now be fetched."""

    ticker: str
    cik: str
    filing_type: Literal["10-K", "10-Q", "8-K", "10-K/A", "10-Q/A", "8-K/A"]
    accession_number: str | None = None
    filing_date: str | None = None
    available_items: list[str]
    url: str

    @field_validator("cik")
    @classmethod
    def _cik(cls, v: str) -> str:
        if not re.fullmatch(r"\d{10}", v):
            raise ValueError("cik must have 10 digits")
        return v

    @model_validator(mode="after")
    def _items(self) -> FilingItemsMetadata:
        bad = [i for i in self.available_items if i not in _ITEMS[self.filing_type.removesuffix("/A")]]
        if bad:
            raise ValueError(f"items {bad} are not {self.filing_type} items the endpoint accepts")
        return self


def _payload_model(family: str) -> type[BaseModel]:
    if family in FILING_LEVEL:
        return FilingPayload
    if family in RELEASE_LEVEL:
        return ReleasePayload
    models: dict[str, type[BaseModel]] = {
        "earnings": EarningsPayload,
        "inflation": InflationPayload,
        "interest_rates": InterestRatesPayload,
        "labor": LaborPayload,
        "yield_curve": YieldCurvePayload,
        "filing_items.metadata": FilingItemsMetadata,
    }
    return models[family]


class Event(BaseModel):
    """A webhook envelope with a validated payload."""

    model_config = ConfigDict(extra="allow")
    id: uuid.UUID
    type: Literal[EVENT_TYPES]  # type: ignore[valid-type]
    api_version: str
    livemode: bool
    created: int
    data: dict[str, Any]

    @model_validator(mode="after")
    def _payload(self) -> Event:
        obj = self.data.get("object")
        if not isinstance(obj, dict):
            raise ValueError("data must be {'object': {...}}")
        model = _payload_model(self.family)
        model.model_validate(obj)
        key = FAMILIES[self.family][1]
        if self.family in FILING_LEVEL + RELEASE_LEVEL:
            if not isinstance(obj.get(key), list):
                raise ValueError(f"a {self.type} payload carries its records under {key!r}")
        return self

    @property
    def family(self) -> str:
        """The event family (the type without ``.created``)."""
        return self.type[: -len(".created")]

    @property
    def payload(self) -> dict[str, Any]:
        """``data.object``."""
        return self.data["object"]

    def records(self) -> list[dict[str, Any]]:
        """The event's records, each with the header fields a record of its dataset carries."""
        obj = self.payload
        fam = self.family
        key = FAMILIES[fam][1] or fam
        if fam in FILING_LEVEL:
            head = {k: obj.get(k) for k in ("ticker", "accession_number", "filing_date", "form_type")}
            return [{**head, **r} for r in obj[key]]
        if fam in RELEASE_LEVEL:
            head = {k: obj.get(k) for k in ("ticker", "report_period")}
            return [{**head, **r} for r in obj[key]]
        if fam in ("inflation", "labor", "interest_rates"):
            return list(obj[key])
        if fam == "yield_curve":
            return [YieldCurvePayload.model_validate(obj).curve()]
        if fam == "filing_items.metadata":
            return [
                {
                    "ticker": obj["ticker"],
                    "cik": obj["cik"],
                    "filing_type": obj["filing_type"],
                    "accession_number": obj.get("accession_number"),
                    "filing_date": obj["filing_date"],
                    "url": obj["url"],
                }
            ]
        return [obj]

    def frame(self) -> pd.DataFrame:
        """The same typed frame the matching endpoint function returns."""
        endpoint, _ = FAMILIES[self.family]
        from fdkit.catalog.endpoints import get

        ep = get(endpoint)
        records = self.records()
        body: dict[str, Any] = {ep.response_key: records if ep.kind != "object" or ep.list_payload else records[0]}
        params = {"bank": self.payload.get("bank")} if self.family == "interest_rates" else {}
        return to_frame(ep, [(params, body)])


_FILING_HEAD = {
    "ticker": "AAPL",
    "accession_number": "0000320193-24-000123",
    "filing_date": "2024-11-01",
    "form_type": "10-K",
}
_RELEASE_HEAD = {
    "ticker": "AAPL",
    "accession_number": "0000320193-24-000120",
    "sector": "Technology",
    "report_period": "2024-09-28",
}
_SEGMENT_REPORT = {"report_period": "2024-09-28", "fiscal_period": "FY2024", "period": "annual", "currency": "USD"}
_EXAMPLE_RECORDS: dict[str, list[dict[str, Any]]] = {
    "income_statements": [{"report_period": "2024-09-28", "period": "annual", "revenue": 391035000000.0}],
    "balance_sheets": [{"report_period": "2024-09-28", "period": "annual", "total_assets": 364980000000.0}],
    "cash_flow_statements": [
        {"report_period": "2024-09-28", "period": "annual", "net_cash_flow_from_operations": 118254000000.0}
    ],
    "financial_metrics": [{"report_period": "2024-09-28", "period": "annual", "net_margin": 0.2397}],
    "income_statement_segments": [
        {**_SEGMENT_REPORT, "revenue": {"product": [{"label": "iPhone", "value": 201183000000.0}], "segment": []}}
    ],
    "balance_sheet_segments": [
        {**_SEGMENT_REPORT, "assets": {"product": [], "segment": [{"label": "Americas", "value": 1.0e9}]}}
    ],
    "cash_flow_statement_segments": [
        {**_SEGMENT_REPORT, "capital_expenditure": {"product": [], "segment": [{"label": "Americas", "value": 1.0e9}]}}
    ],
    "insider_trades": [
        {
            "name": "Jane Doe",
            "transaction_date": "2024-10-30",
            "transaction_shares": -1000.0,
            "transaction_price_per_share": 230.0,
            "security_title": "Common Stock",
        }
    ],
    "insider_ownership": [
        {
            "name": "Jane Doe",
            "as_of_date": "2024-10-30",
            "shares_owned": 10000.0,
            "holding_type": "non_derivative",
            "security_title": "Common Stock",
        }
    ],
    "forward_guidance": [{"metric_name": "revenue", "period": "Q1 FY2025", "low": 1.0e11, "high": 1.1e11}],
    "non_gaap_metrics": [{"metric_name": "adjusted_eps", "value": 1.64}],
    "operating_kpis": [{"metric_name": "installed_base_devices", "value": 2.2e9}],
}


def example_payload(family: str) -> dict[str, Any]:
    """A spec-shaped example payload of an event family (``fdkit events test`` sends it where the lake has none).

    Args:
        family: e.g. ``"labor"`` or ``"operating_kpis"``.

    Returns:
        ``data.object`` of such an event (valid: :func:`make_event` accepts it).

    Example:
        >>> sorted(example_payload("labor"))
        ['date', 'labor', 'release']
    """
    if family in FILING_LEVEL:
        head = {**_FILING_HEAD, "form_type": "5" if family.startswith("insider") else "10-K"}
        return {**head, family: _EXAMPLE_RECORDS[family]}
    if family in RELEASE_LEVEL:
        return {**_RELEASE_HEAD, family: _EXAMPLE_RECORDS[family]}
    examples: dict[str, dict[str, Any]] = {
        "earnings": {
            "ticker": "AAPL",
            "report_period": "2024-09-28",
            "source_type": "8-K",
            "filing_date": "2024-10-31",
            "quarterly": {"revenue": 94930000000.0},
            "annual": {},
        },
        "inflation": {
            "date": "2024-10-01",
            "inflation": [
                {
                    "series": "cpi_all_items",
                    "date": "2024-10-01",
                    "value": 315.664,
                    "change_1m_pct": 0.24,
                    "change_12m_pct": 2.6,
                }
            ],
        },
        "interest_rates": {
            "bank": "FED",
            "date": "2024-11-07",
            "interest_rates": [
                {"bank": "FED", "date": "2024-11-07", "name": "Federal Funds Target Rate (midpoint)", "rate": 4.625}
            ],
        },
        "labor": {
            "release": "jobless_claims",
            "date": "2024-11-02",
            "labor": [
                {
                    "series": "continued_claims",
                    "date": "2024-10-26",
                    "value": 1892000.0,
                    "change": 26000.0,
                    "change_year": 66000.0,
                    "change_year_pct": 3.614458,
                },
                {
                    "series": "initial_jobless_claims",
                    "date": "2024-11-02",
                    "value": 221000.0,
                    "change": -3000.0,
                    "change_year": 3000.0,
                    "change_year_pct": 1.376147,
                },
                {
                    "series": "insured_unemployment_rate",
                    "date": "2024-10-26",
                    "value": 1.2,
                    "change": 0.0,
                    "change_year": 0.0,
                    "change_year_pct": None,
                },
            ],
        },
        "yield_curve": {
            "date": "2024-11-01",
            "yield_curve": {"date": "2024-11-01", "1_month": 4.73, "10_year": 4.38, "30_year": 4.56},
        },
        "filing_items.metadata": {
            "ticker": "AAPL",
            "cik": "0000320193",
            "filing_type": "10-K",
            "accession_number": "0000320193-24-000123",
            "filing_date": "2024-11-01",
            "available_items": ["Item-1", "Item-1A", "Item-7"],
            "url": "http://127.0.0.1:8000/filings/items?ticker=AAPL&filing_type=10-K&year=2024",
        },
    }
    return examples[family]


def make_event(
    family: str,
    payload: dict[str, Any],
    *,
    livemode: bool = True,
    created: int | None = None,
    event_id: str | None = None,
) -> dict[str, Any]:
    """Build (and validate) an envelope.

    Args:
        family: e.g. ``"income_statements"`` or ``"filing_items.metadata"``.
        payload: ``data.object``.
        livemode: false for test events.
        created: unix seconds (now by default).
        event_id: a UUID (random by default; deterministic ids make replays idempotent).

    Returns:
        The envelope as a JSON-ready dict.
    """
    env = {
        "id": event_id or str(uuid.uuid4()),
        "type": f"{family}.created",
        "api_version": API_VERSION,
        "livemode": livemode,
        "created": int(time.time() if created is None else created),
        "data": {"object": payload},
    }
    Event.model_validate(env)
    return env


def parse_event(body: bytes | dict[str, Any]) -> Event:
    """Parse and validate an envelope.

    Args:
        body: raw JSON bytes or a decoded dict.

    Returns:
        The :class:`Event`.

    Raises:
        ValidationError: for a malformed envelope or payload; ``ValueError`` for invalid JSON.
    """
    if isinstance(body, bytes | str):
        return Event.model_validate_json(body)
    return Event.model_validate(body)
