"""The endpoint catalog: one declarative entry per service path.

This table is the single source of truth for the client functions (:mod:`fdkit.datasets`), the server's routes
and OpenAPI document (:mod:`fdkit.server`), the cache TTLs (:mod:`fdkit.client.cache`) and the tests. Adding an
endpoint is one :class:`Endpoint` here plus its data in the lake.

Example:
    >>> from fdkit.catalog import CATALOG, by_path
    >>> ep = by_path("/prices")
    >>> ep.name, ep.response_key, ep.page_size, ep.param("limit").max
    ('prices', 'prices', 100, 5000)
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Literal

from fdkit.errors import UnknownNameError, suggest

__all__ = [
    "Param",
    "Endpoint",
    "CATALOG",
    "by_path",
    "get",
    "listing_for",
    "NEVER",
    "FILING_ITEMS_10K",
    "FILING_ITEMS_10Q",
    "FILING_ITEMS_8K",
    "FILING_ITEM_TITLES",
]

ParamType = Literal["string", "integer", "number", "boolean", "date", "array", "object"]
Kind = Literal["list", "object", "listing", "search"]

#: cache TTL meaning "never expires" (immutable records such as filing items)
NEVER = -1
MINUTE, HOUR, DAY = 60, 3600, 86400


@dataclass(frozen=True)
class Param:
    """One request parameter (query string, or JSON body field for POST endpoints).

    Attributes:
        name: the service's parameter name (kept verbatim in client functions).
        type: ``string``, ``integer``, ``number``, ``boolean``, ``date``, ``array`` or ``object``.
        required: the request is invalid without it.
        enum: allowed values.
        default: the value the server assumes when absent.
        min: inclusive lower bound (numbers).
        max: inclusive upper bound (numbers).
        repeatable: may be given several times (``?filing_type=10-K&filing_type=10-Q``).
        items: element type of an ``array`` body field.
        description: one line for docs.
        example: a value that answers 200 on the reference data (docs and fuzzing start from it).
        client_default: the value fdkit's dataset functions and CLI assume when the caller leaves a parameter
            out that the service requires (e.g. ``interval="day"`` for prices); ``None``: no such default.
        pattern: a regular expression the whole (stripped) value must match, for open vocabularies that still
            have a form (a currency is any three letters, ISO 4217); the 400 quotes ``description``.
    """

    name: str
    type: ParamType = "string"
    required: bool = False
    enum: tuple[str, ...] | None = None
    default: Any = None
    min: float | None = None
    max: float | None = None
    repeatable: bool = False
    items: str | None = None
    description: str = ""
    example: Any = None
    client_default: Any = None
    pattern: str | None = None


@dataclass(frozen=True)
class Endpoint:
    """One service path.

    Attributes:
        name: public dataset name; the client function of the same name fetches it.
        path: canonical path, no trailing slash (the server answers both forms).
        method: ``GET`` or ``POST``.
        params: query parameters (GET) or body fields (POST).
        response_key: top-level key of the JSON array/object in the response.
        schema: record schema name in :data:`fdkit.catalog.schema.SCHEMAS` (``None`` for listings).
        index: index columns of the typed frame.
        kind: ``list`` (paginated or not), ``object`` (single record), ``listing`` (names), ``search`` (POST).
        page_size: records per page; ``None`` means not paginated.
        default_limit: ``limit`` the server assumes.
        ttl: cache time-to-live in seconds (``NEVER`` for immutable records).
        auth: an API key is required.
        tier: ``free`` endpoints are in every plan; ``paid`` ones need a paid plan (402 otherwise).
        one_of: groups of parameters of which at least one must be given.
        exclusive: groups of parameters of which at most one may be given.
        dataset: the lake dataset that serves it.
        ticker_param: the parameter a ticker list fans out over (client side).
        newest_first: records are served newest first (``False``: chronological, as for bars).
        summary: one-line description.
        tickers_listing: the listing endpoint that names the tickers this endpoint answers for, where it has
            none of its own (``fdkit.available("income_statements")`` asks ``balance_sheets_tickers``).
        shape: how records nest (a key of :data:`fdkit.catalog.shapes.SHAPES`): ``flat``, ``earnings``,
            ``segment_items`` or ``line_items``.
        frame_schema: the schema of the flat rows (frames, lake) when it differs from ``schema``.
        time_index: the bar-time column of OHLCV endpoints: UTC on the wire, tz-naive in frames for daily and
            longer intervals.
        param_columns: parameters that filter a column of another name (``{"period": "period_type"}``).
        row_filter: the rows of ``dataset`` this endpoint serves (``{"statement": "income_statement"}``).
        context_fields: top-level response fields that belong to every record (a filing's header for its items).
        list_payload: an ``object`` endpoint whose payload is a list of records (snapshots of several series).
        examples: requests (wire parameters) that answer 200 on the bundled reference data: the first is the
            docstring example of the generated function and the OpenAPI example; the tests call every one.
        invalid_examples: requests the service must answer with 400 (the tests send them); none for an endpoint
            without parameters (names it does not know are ignored, never an error).
        record_key: fields that identify one record of one request's answer; the paginator drops a record whose
            key it saw on an earlier page (a service repeating records). Empty: records are never dropped.
        split_adjusted: prices, per-share values and share counts are adjusted for every split the service lists
            (frames say so in ``attrs["split_basis"]``, see :mod:`fdkit.frames.basis`).
        response_schema: the JSON schema of the whole 200 body, for answers that are documents rather than
            records (``/filings/items/types``: an object keyed by form type); the handler's answer is then the
            body itself.
        extension_params: parameters the service's own document for this path does not list (the 2026 one, or
            the 2025 one for a path only it has): fdkit's extensions, which the client sends only to an fdkit
            peer (``fdkit serve``, the embedded default); ``tests/test_client_answers.py`` checks the list against
            the documents.
        package: the data package whose dataset the endpoint serves (``fdkit-history``): a lake without the
            dataset answers 404 naming it, not an empty list.
        wire_values: values of a field the service sends under another name than the lake keeps
            (``{"holding_type": {"non_derivative": "common"}}``, the seed's contract: :mod:`.contracts`).
    """

    name: str
    path: str
    response_key: str
    schema: str | None
    index: tuple[str, ...] = ()
    params: tuple[Param, ...] = ()
    method: Literal["GET", "POST"] = "GET"
    kind: Kind = "list"
    page_size: int | None = 10
    default_limit: int | None = None
    ttl: int = DAY
    auth: bool = True
    tier: Literal["free", "paid"] = "paid"
    one_of: tuple[tuple[str, ...], ...] = ()
    exclusive: tuple[tuple[str, ...], ...] = ()
    dataset: str | None = None
    ticker_param: str | None = "ticker"
    newest_first: bool = True
    summary: str = ""
    tickers_listing: str | None = None
    shape: str = "flat"
    frame_schema: str | None = None
    time_index: str | None = None
    param_columns: Mapping[str, str] = field(default_factory=dict)
    row_filter: Mapping[str, str] = field(default_factory=dict)
    context_fields: tuple[str, ...] = ()
    list_payload: bool = False
    examples: tuple[Mapping[str, Any], ...] = ()
    invalid_examples: tuple[Mapping[str, Any], ...] = ()
    record_key: tuple[str, ...] = ()
    split_adjusted: bool = False
    response_schema: Mapping[str, Any] | None = None
    extension_params: tuple[str, ...] = ()
    package: str | None = None
    wire_values: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    def param(self, name: str) -> Param:
        """Return the parameter called ``name``.

        Args:
            name: parameter name.

        Returns:
            The :class:`Param`.

        Raises:
            KeyError: when the endpoint has no such parameter.

        Example:
            >>> get("prices").param("interval").required
            True
        """
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(f"{self.path} has no parameter {name!r}")

    @functools.cached_property
    def param_names(self) -> tuple[str, ...]:
        """Names of all parameters, in declaration order (worked out once: a bulk call asks it per ticker)."""
        return tuple(p.name for p in self.params)

    @property
    def row_schema(self) -> str | None:
        """The schema of the flat rows of this endpoint's frames (``frame_schema`` or ``schema``)."""
        return self.frame_schema or self.schema

    @property
    def finite_default(self) -> int | None:
        """The number of records a call without ``limit`` returns, where that can leave records out.

        Functions of these endpoints default to ``limit="default"`` (this many, with a ``TruncatedWarning`` when
        more exist); ``limit=None`` asks for everything. Bar endpoints (``time_index``) return a whole date
        range instead, window by window.
        """
        if self.time_index is not None or "limit" not in self.param_names or self.default_limit is None:
            return None
        if self.kind == "search" and "tickers" in self.param_names:  # line items: a limit per ticker, not in all
            return None
        return self.default_limit

    @property
    def paginated(self) -> bool:
        """Whether the server pages this endpoint's results."""
        return self.page_size is not None and self.kind in ("list", "search")


# ---------------------------------------------------------------------------------------------------------
# parameter groups
# ---------------------------------------------------------------------------------------------------------
TICKER = Param("ticker", description="Ticker symbol, e.g. AAPL.", example="AAPL")
TICKER_REQ = Param("ticker", required=True, description="Ticker symbol, e.g. AAPL.", example="AAPL")
CIK = Param("cik", description="SEC Central Index Key, used in place of ticker.", example="0000320193")
# the seed: "period ... defaults to annual" (the 2026 document marks it required; a request without it is answered)
PERIOD_STMT = Param(
    "period", enum=("annual", "quarterly", "ttm"), default="annual", description="Reporting period (default annual)."
)
PERIOD_SEG = Param(
    "period", enum=("annual", "quarterly"), default="annual", description="Reporting period (default annual)."
)
# the 2025 document (and the earliest) mark the segmented revenues' period required: no silent default there
PERIOD_SEG_REQ = Param(
    "period", required=True, enum=("annual", "quarterly"), client_default="annual", description="Reporting period."
)


def _limit(default: int, maximum: int | None = None) -> Param:
    note = f" Values above {maximum} are clamped to it." if maximum else ""
    return Param("limit", "integer", default=default, min=1, max=maximum, description="Total records wanted." + note)


def _date_filters(name: str) -> tuple[Param, ...]:
    return tuple(
        Param(f"{name}{suffix}", "date", description=f"{name} {word} (YYYY-MM-DD).")
        for suffix, word in (("", "equal to"), ("_gte", ">="), ("_gt", ">"), ("_lte", "<="), ("_lt", "<"))
    )


REPORT_PERIOD_FILTERS = _date_filters("report_period")
FILING_DATE_FILTERS = _date_filters("filing_date")
START_END_REQ = (
    Param("start_date", "date", required=True, description="First date, inclusive (YYYY-MM-DD).", example="2023-01-03"),
    Param("end_date", "date", required=True, description="Last date, inclusive (YYYY-MM-DD).", example="2023-03-31"),
)
#: the forms of an initial public offering: registration statements, their amendments, the final prospectuses
REGISTRATION_FORMS = ("S-1", "S-1/A", "F-1", "F-1/A", "424B1", "424B4")
#: the series of the inflation and labour datasets (names as the lake stores them)
INFLATION_SERIES = (
    "cpi_all_items",
    "cpi_commodities_less_food_energy",
    "cpi_core",
    "cpi_energy",
    "cpi_energy_commodities",
    "cpi_energy_services",
    "cpi_food",
    "cpi_food_at_home",
    "cpi_food_away_from_home",
    "cpi_gasoline",
    "cpi_services_less_energy",
    "cpi_shelter",
)
#: (continued claims and the insured unemployment rate come with the weekly claims release: none in the bundled
#: sources, served from a lake that landed them)
LABOR_SERIES = (
    "average_hourly_earnings",
    "continued_claims",
    "initial_jobless_claims",
    "insured_unemployment_rate",
    "job_openings",
    "labor_force_participation_rate",
    "nonfarm_payrolls",
    "u6_unemployment_rate",
    "unemployment_rate",
)

START_END = (
    Param("start_date", "date", description="First date, inclusive (YYYY-MM-DD)."),
    Param("end_date", "date", description="Last date, inclusive (YYYY-MM-DD)."),
)

FILING_ITEMS_10K = (
    "Item-1",
    "Item-1A",
    "Item-1B",
    "Item-1C",
    "Item-2",
    "Item-3",
    "Item-4",
    "Item-5",
    "Item-6",
    "Item-7",
    "Item-7A",
    "Item-8",
    "Item-9",
    "Item-9A",
    "Item-9B",
    "Item-9C",
    "Item-10",
    "Item-11",
    "Item-12",
    "Item-13",
    "Item-14",
    "Item-15",
    "Item-16",
)
FILING_ITEMS_10Q = (
    "Part-1,Item-1",
    "Part-1,Item-2",
    "Part-1,Item-3",
    "Part-1,Item-4",
    "Part-2,Item-1",
    "Part-2,Item-1A",
    "Part-2,Item-2",
    "Part-2,Item-3",
    "Part-2,Item-4",
    "Part-2,Item-5",
    "Part-2,Item-6",
)
FILING_ITEMS_8K = (
    "Item-1.01",
    "Item-1.02",
    "Item-1.03",
    "Item-1.04",
    "Item-1.05",
    "Item-2.01",
    "Item-2.02",
    "Item-2.03",
    "Item-2.04",
    "Item-2.05",
    "Item-2.06",
    "Item-3.01",
    "Item-3.02",
    "Item-3.03",
    "Item-4.01",
    "Item-4.02",
    "Item-5.01",
    "Item-5.02",
    "Item-5.03",
    "Item-5.04",
    "Item-5.05",
    "Item-5.06",
    "Item-5.07",
    "Item-5.08",
    "Item-6.01",
    "Item-6.02",
    "Item-6.03",
    "Item-6.04",
    "Item-6.05",
    "Item-7.01",
    "Item-8.01",
    "Item-9.01",
)


#: the title of every item name ``/filings/items`` accepts (``/filings/items/types``), per form type
FILING_ITEM_TITLES: Mapping[str, Mapping[str, str]] = MappingProxyType(
    {
        "10-K": dict(
            zip(
                FILING_ITEMS_10K,
                (
                    "Business",
                    "Risk Factors",
                    "Unresolved Staff Comments",
                    "Cybersecurity",
                    "Properties",
                    "Legal Proceedings",
                    "Mine Safety Disclosures",
                    "Market for Registrant's Common Equity, Related Stockholder Matters and Issuer "
                    "Purchases of Equity Securities",
                    "[Reserved]",
                    "Management's Discussion and Analysis of Financial Condition and Results of Operations",
                    "Quantitative and Qualitative Disclosures About Market Risk",
                    "Financial Statements and Supplementary Data",
                    "Changes in and Disagreements with Accountants on Accounting and Financial Disclosure",
                    "Controls and Procedures",
                    "Other Information",
                    "Disclosure Regarding Foreign Jurisdictions that Prevent Inspections",
                    "Directors, Executive Officers and Corporate Governance",
                    "Executive Compensation",
                    "Security Ownership of Certain Beneficial Owners and Management and Related Stockholder Matters",
                    "Certain Relationships and Related Transactions, and Director Independence",
                    "Principal Accountant Fees and Services",
                    "Exhibits and Financial Statement Schedules",
                    "Form 10-K Summary",
                ),
                strict=True,
            )
        ),
        "10-Q": dict(
            zip(
                FILING_ITEMS_10Q,
                (
                    "Financial Statements",
                    "Management's Discussion and Analysis of Financial Condition and Results of Operations",
                    "Quantitative and Qualitative Disclosures About Market Risk",
                    "Controls and Procedures",
                    "Legal Proceedings",
                    "Risk Factors",
                    "Unregistered Sales of Equity Securities and Use of Proceeds",
                    "Defaults Upon Senior Securities",
                    "Mine Safety Disclosures",
                    "Other Information",
                    "Exhibits",
                ),
                strict=True,
            )
        ),
        "8-K": dict(
            zip(
                FILING_ITEMS_8K,
                (
                    "Entry into a Material Definitive Agreement",
                    "Termination of a Material Definitive Agreement",
                    "Bankruptcy or Receivership",
                    "Mine Safety - Reporting of Shutdowns and Patterns of Violations",
                    "Material Cybersecurity Incidents",
                    "Completion of Acquisition or Disposition of Assets",
                    "Results of Operations and Financial Condition",
                    "Creation of a Direct Financial Obligation or an "
                    "Obligation under an Off-Balance Sheet Arrangement of a Registrant",
                    "Triggering Events That Accelerate "
                    "or Increase a Direct Financial Obligation or an Obligation under an Off-Balance Sheet Arrangement",
                    "Costs Associated with Exit or Disposal Activities",
                    "Material Impairments",
                    "Notice of Delisting or "
                    "Failure to Satisfy a Continued Listing Rule or Standard; Transfer of Listing",
                    "Unregistered Sales of Equity Securities",
                    "Material Modification to Rights of Security Holders",
                    "Changes in Registrant's Certifying Accountant",
                    "Non-Reliance on Previously Issued Financial Statements "
                    "or a Related Audit Report or Completed Interim Review",
                    "Changes in Control of Registrant",
                    "Departure of Directors or Certain Officers; Election of Directors; "
                    "Appointment of Certain Officers; Compensatory Arrangements of Certain Officers",
                    "Amendments to Articles of Incorporation or Bylaws; Change in Fiscal Year",
                    "Temporary Suspension of Trading Under Registrant's Employee Benefit Plans",
                    "Amendments to the Registrant's Code of Ethics, or Waiver of a Provision of the Code of Ethics",
                    "Change in Shell Company Status",
                    "Submission of Matters to a Vote of Security Holders",
                    "Shareholder Director Nominations",
                    "ABS Informational and Computational Material",
                    "Change of Servicer or Trustee",
                    "Change in Credit Enhancement or Other External Support",
                    "Failure to Make a Required Distribution",
                    "Securities Act Updating Disclosure",
                    "Regulation FD Disclosure",
                    "Other Events",
                    "Financial Statements and Exhibits",
                ),
                strict=True,
            )
        ),
    }
)


def _statement(name: str, path: str, summary: str, *, period: Param = PERIOD_STMT, **kw: Any) -> Endpoint:
    return Endpoint(
        name=name,
        path=path,
        response_key=kw.pop("response_key", name),
        schema=kw.pop("schema", name),
        index=("ticker", "report_period"),
        # filing-date filters: what was known on a day (point in time; rows carry their first filing's date)
        params=(TICKER, CIK, period, _limit(4), *REPORT_PERIOD_FILTERS, *FILING_DATE_FILTERS),
        default_limit=4,
        one_of=(("ticker", "cik"),),
        exclusive=(("ticker", "cik"),),
        dataset=kw.pop("dataset", name),
        summary=summary,
        tickers_listing=kw.pop("tickers_listing", "balance_sheets_tickers"),
        record_key=kw.pop("record_key", ("ticker", "report_period", "period", "accession_number")),
        split_adjusted=kw.pop("split_adjusted", True),
        **kw,
    )


def _listing(name: str, path: str, key: str, dataset: str | None, summary: str, **kw: Any) -> Endpoint:
    # keyless (the 2026 document's `security: []`, "does not require authentication") unless auth=True is passed
    return Endpoint(
        name=name,
        path=path,
        response_key=key,
        schema=None,
        kind="listing",
        page_size=None,
        auth=kw.pop("auth", False),
        tier="free",
        dataset=dataset,
        ticker_param=None,
        summary=summary,
        **kw,
    )


#: an fdkit extension of /prices: bars without an as-traded price (basis adjusted_only) are served only on request
#: (the documents type open..close as numbers, never null); fdkit's own functions ask for them
ADJUSTED = Param(
    "adjusted",
    "boolean",
    default=False,
    client_default=True,
    description="Also return the bars that have no as-traded price (basis adjusted_only): open..close "
    "null, adj_close set (an fdkit extension).",
)


def _multiplier(required: bool) -> Param:
    """``interval_multiplier``: required where the document marks it so (fdkit's functions then send 1), else 1."""
    if required:
        return Param(
            "interval_multiplier",
            "integer",
            required=True,
            min=1,
            max=100_000,
            client_default=1,
            description="Bars per output bar.",
        )
    return Param(
        "interval_multiplier",
        "integer",
        default=1,
        min=1,
        max=100_000,
        client_default=1,  # sent: the seed's contract requires it (fdkit.catalog.contracts)
        description="Bars per output bar.",
    )


def _prices(
    name: str,
    path: str,
    intervals: tuple[str, ...],
    summary: str,
    *,
    multiplier_required: bool = False,
    adjusted: bool = False,
    **kw: Any,
) -> Endpoint:
    multiplier = _multiplier(multiplier_required)
    return Endpoint(
        name=name,
        path=path,
        response_key="prices",
        schema=name,
        index=("ticker", "time"),
        params=(
            TICKER_REQ,
            Param("interval", required=True, enum=intervals, description="Bar interval.", client_default="day"),
            multiplier,
            Param(
                "label",
                enum=("start", "end"),
                default="start",
                description="Stamp an aggregated bar with its first (start) or last (end) source bar's time; "
                "a bar carries its last close, so 'end' never dates a close before it happened.",
            ),
            *START_END_REQ,
            _limit(5000, 5000),
            *((ADJUSTED,) if adjusted else ()),
        ),
        page_size=100,
        default_limit=5000,
        ttl=12 * HOUR,
        dataset=name,
        newest_first=False,
        time_index="time",
        context_fields=("ticker",),
        record_key=("time",),
        summary=summary,
        **kw,
    )


SCREEN_FILTERS = Param(
    "filters",
    "array",
    required=True,
    items="filter",
    description="[{field, operator eq|gt|gte|lt|lte|in, value}], combined with AND.",
)
# any ISO 4217 code: a well-formed code the lake has no statements in simply matches nothing
CURRENCY = Param(
    "currency",
    pattern=r"[A-Za-z]{3}",
    description="Reporting currency, an ISO 4217 code (three letters, e.g. USD).",
    example="USD",
)
SEARCH_PERIOD = Param("period", enum=("annual", "quarterly", "ttm"), default="ttm", description="Statement period.")
KNOWN_BY = Param(
    "filing_date_lte",
    "date",
    description="Only statements filed on or before this day (point in time: what was known then).",
)


def _search(name: str, path: str, params: tuple[Param, ...], default_limit: int, summary: str) -> Endpoint:
    return Endpoint(
        name=name,
        path=path,
        method="POST",
        response_key="search_results",
        schema="search_results",
        index=("ticker", "report_period"),
        kind="search",
        page_size=None,
        default_limit=default_limit,
        ticker_param=None,
        dataset="financial_metrics",
        params=params,
        summary=summary,
        split_adjusted=True,
    )


def _series_history(name: str, path: str, series: tuple[str, ...], summary: str) -> Endpoint:
    """A macro dataset's history: every series (or one), by date, in pages of 500."""
    return Endpoint(
        name=name,
        path=path,
        response_key=name,
        schema=name,
        index=("series", "date"),
        params=(
            Param("series", enum=series, description="One series (default: all)."),
            *START_END,
            _limit(10000, 10000),
        ),
        page_size=500,
        default_limit=10000,
        newest_first=False,
        dataset=name,
        tier="free",
        ticker_param=None,
        record_key=("series", "date"),
        ttl=HOUR,
        summary=summary,
    )


def _kpi(name: str, path: str, summary: str) -> Endpoint:
    return Endpoint(
        name=name,
        path=path,
        response_key=name,
        schema=name,
        index=("ticker", "report_period"),
        params=(
            TICKER_REQ,
            Param("metric_name", description="Filter on a metric name."),
            Param("period", enum=("quarterly", "annual"), description="Period type."),
            Param("report_period_gte", "date"),
            Param("report_period_lte", "date"),
            _limit(10),
        ),
        default_limit=10,
        dataset=name,
        summary=summary,
        param_columns={"period": "period_type"},
    )


def _corporate_actions(name: str, summary: str, **kw: Any) -> Endpoint:
    """A ticker's dated corporate actions (an extension): ``/<name>`` by ticker and date range, oldest first."""
    return Endpoint(
        name=name,
        path=f"/{name}",
        response_key=name,
        schema=name,
        index=("ticker", "date"),
        params=(TICKER_REQ, *START_END, _limit(100, 1000)),
        page_size=100,
        default_limit=100,
        newest_first=False,
        dataset=name,
        tier="free",
        record_key=("ticker", "date"),
        ttl=DAY,
        summary=summary,
        **kw,
    )


def _snapshot(name: str, path: str, key: str, schema: str, summary: str, **kw: Any) -> Endpoint:
    return Endpoint(
        name=name,
        path=path,
        response_key=key,
        schema=schema,
        kind="object",
        page_size=None,
        ttl=kw.pop("ttl", 5 * MINUTE),
        ticker_param=kw.pop("ticker_param", None),
        summary=summary,
        **kw,
    )


_ENDPOINTS: tuple[Endpoint, ...] = (
    # --- statements ---------------------------------------------------------------------------------------
    _statement("income_statements", "/financials/income-statements", "Income statements."),
    _statement("balance_sheets", "/financials/balance-sheets", "Balance sheets."),
    _statement("cash_flow_statements", "/financials/cash-flow-statements", "Cash flow statements."),
    _statement(
        "segmented_revenues",
        "/financials/segmented-revenues",
        "Revenue by product, business segment and geography (items with segment members).",
        period=PERIOD_SEG_REQ,
        tickers_listing="segmented_revenues_tickers",
        shape="segment_items",
        frame_schema="segment_items",
    ),
    *(
        _statement(
            f"{stmt}_segments",
            f"/financials/{path}/segments",
            f"{title} line items broken down by product and segment.",
            period=PERIOD_SEG,
            response_key="segmented_financials",
            schema="segmented_financials",
            dataset="segmented_financials",
            tickers_listing="segmented_revenues_tickers",
            row_filter={"statement": stmt},
            shape="line_items",
        )
        for stmt, path, title in (
            ("income_statement", "income-statements", "Income statement"),
            ("balance_sheet", "balance-sheets", "Balance sheet"),
            ("cash_flow_statement", "cash-flow-statements", "Cash flow statement"),
        )
    ),
    _statement(
        "segmented_financials",
        "/financials/segments",
        "Every statement's line items broken down by product and segment, one record per report.",
        period=PERIOD_SEG,
        response_key="segmented_financials",
        schema="segmented_financials",
        dataset="segmented_financials",
        tickers_listing="segmented_revenues_tickers",
        shape="statement_line_items",
        frame_schema="statement_segments",
    ),
    _statement(
        "financial_statements",
        "/financials",
        "Income statement, balance sheet and cash flow statement in one answer (limit: periods of each); the "
        "frame has one row per period with every statement's fields.",
        response_key="financials",
        schema="financial_statements",
        dataset=None,
        kind="object",
        page_size=None,
        shape="statement_bundle",
        record_key=(),
    ),
    *(
        _statement(
            f"as_reported_{key}",
            f"/financials/{path}/as-reported",
            f"{title} as its period's own filing reported it: one line item per reported value, face order.",
            period=PERIOD_SEG,
            response_key=f"as_reported_{key}",
            schema="as_reported",
            dataset="statement_vintages",
            shape="as_reported",
            row_filter={"statement": statement},
            record_key=("ticker", "report_period", "period"),
            split_adjusted=True,
        )
        for key, path, title, statement in (
            ("income_statements", "income-statements", "The income statement", "income_statement"),
            ("balance_sheets", "balance-sheets", "The balance sheet", "balance_sheet"),
            ("cash_flow_statements", "cash-flow-statements", "The cash flow statement", "cash_flow_statement"),
        )
    ),
    _statement(
        "as_reported_financials",
        "/financials/as-reported",
        "All three statements as each period's own filing reported them.",
        period=PERIOD_SEG,
        response_key="as_reported_financials",
        schema="as_reported",
        dataset="statement_vintages",
        shape="as_reported_bundle",
        record_key=("ticker", "report_period", "period"),
        split_adjusted=True,
    ),
    _statement(
        "financial_metrics",
        "/financial-metrics",
        "Ratios computed from the statements and prices (valuation, profitability, liquidity, growth).",
    ),
    _snapshot(
        "financial_metrics_snapshot",
        "/financial-metrics/snapshot",
        "snapshot",
        "financial_metrics",
        "Latest trailing-twelve-month valuation, profitability, liquidity, leverage and growth metrics of a company.",
        params=(TICKER, CIK),
        one_of=(("ticker", "cik"),),
        exclusive=(("ticker", "cik"),),
        ttl=HOUR,
        dataset="financial_metrics",
        index=("ticker", "report_period"),
        ticker_param="ticker",
        row_filter={"period": "ttm"},
        tickers_listing="financial_metrics_snapshot_tickers",
    ),
    _search(
        "screen",
        "/financials/search/screener",
        (
            SCREEN_FILTERS,
            Param("limit", "integer", default=10, min=1, max=1000, description="Results wanted."),
            SEARCH_PERIOD,
            CURRENCY,
            KNOWN_BY,
        ),
        10,
        "Screen companies on statement and metric fields (latest period per ticker, of those filed by "
        "filing_date_lte when given).",
    ),
    _search(
        "financials_search",
        "/financials/search",
        (
            SCREEN_FILTERS,
            Param("limit", "integer", default=100, min=1, max=100, description="Results wanted."),
            SEARCH_PERIOD,
            Param(
                "order_by",
                enum=("ticker", "-ticker", "report_period", "-report_period"),
                default="ticker",
                description="Order of the results; a leading '-' is descending.",
            ),
            CURRENCY,
            KNOWN_BY,
        ),
        100,
        "The screener at the 2025 document's path (POST /financials/search): latest period per ticker passing "
        "every filter, in order_by order.",
    ),
    _search(
        "line_items",
        "/financials/search/line-items",
        (
            Param("tickers", "array", required=True, items="string", description="Tickers to fetch."),
            Param("line_items", "array", required=True, items="string", description="Line items to fetch."),
            SEARCH_PERIOD,
            Param("limit", "integer", default=1, min=1, max=100, description="Periods per ticker."),
            Param("end_date", "date", description="Latest report period, inclusive (YYYY-MM-DD)."),
            KNOWN_BY,
        ),
        1,
        "Chosen line items for several tickers at once.",
    ),
    # --- market data --------------------------------------------------------------------------------------
    _prices(
        "prices",
        "/prices",
        ("minute", "day", "week", "month", "year"),
        "Equity OHLCV bars. Open..close as traded on today's split basis, dividends never in them; basis says "
        "as_traded, or adjusted_only where no as-traded price exists and a bar has only adj_close (split- and "
        "dividend-adjusted as of 2026-02-25; both fields fdkit extensions), served with adjusted=true.",
        tier="free",
        split_adjusted=True,
        adjusted=True,
    ),
    # the crypto path is the 2025 document's: its intervals (no minute) and a required interval_multiplier
    _prices(
        "crypto_prices",
        "/crypto/prices",
        ("day", "week", "month", "year"),
        "Crypto OHLCV bars.",
        multiplier_required=True,
    ),
    _snapshot(
        "price_snapshot",
        "/prices/snapshot",
        "snapshot",
        "price_snapshot",
        "Latest price of one ticker.",
        params=(TICKER_REQ,),
        dataset="prices",
        index=("ticker", "time"),
        tier="free",
        ticker_param="ticker",
        time_index="time",
        split_adjusted=True,
    ),
    _snapshot(
        "market_price_snapshot",
        "/prices/snapshot/market",
        "snapshots",
        "price_snapshot",
        "Latest price of every ticker the service has prices for, with its change on the day.",
        dataset="prices",
        index=("ticker", "time"),
        tier="free",
        time_index="time",
        list_payload=True,
        split_adjusted=True,
    ),
    _snapshot(
        "crypto_price_snapshot",
        "/crypto/prices/snapshot",
        "snapshot",
        "price_snapshot",
        "Latest price of one crypto pair (e.g. BTC-USD).",
        params=(Param("ticker", required=True, description="Crypto pair, e.g. BTC-USD.", example="BTC-USD"),),
        dataset="crypto_prices",
        index=("ticker", "time"),
        ticker_param="ticker",
        time_index="time",
    ),
    Endpoint(
        name="news",
        path="/news",
        response_key="news",
        schema="news",
        index=("ticker", "date"),
        # the 2026 document: ticker "Omit for broad market news" (every ticker's articles, newest first)
        params=(
            Param("ticker", description="Ticker symbol, e.g. AAPL; omit for broad market news.", example="AAPL"),
            *START_END,
            _limit(5, 100),
        ),
        default_limit=5,  # the 2026 document: "default: 5"
        ttl=15 * MINUTE,
        dataset="news",
        tier="free",
        summary="News headlines about a company, newest first; broad market news (every company's) without a ticker.",
        examples=({"ticker": "AAPL", "limit": 25}, {"limit": 5}),
    ),
    # --- filings ------------------------------------------------------------------------------------------
    Endpoint(
        name="filings",
        path="/filings",
        response_key="filings",
        schema="filings",
        index=("ticker", "filing_date"),
        params=(
            TICKER,
            CIK,
            Param("filing_type", repeatable=True, description="Form type(s), e.g. 10-K; repeatable."),
            _limit(10),
        ),
        default_limit=10,
        one_of=(("ticker", "cik"),),
        exclusive=(("ticker", "cik"),),
        dataset="filings",
        tier="free",
        summary="SEC filings of a company, newest first.",
    ),
    Endpoint(
        name="ipos",
        path="/ipos",
        response_key="ipos",
        schema="ipos",
        index=("ticker", "filing_date"),
        params=(
            TICKER,
            CIK,
            Param("filing_date", "date", description="Only filings of this day (YYYY-MM-DD)."),
            _limit(10),
        ),
        default_limit=10,
        exclusive=(("ticker", "cik"),),
        dataset="filings",
        summary="IPO registration statements (S-1, F-1, their amendments, final prospectuses 424B1/424B4), newest "
        "first; every company's without a ticker or CIK.",
    ),
    Endpoint(
        name="filing_items",
        path="/filings/items",
        response_key="items",
        schema="filing_items",
        index=("ticker", "filing_date"),
        kind="object",
        page_size=None,
        ttl=NEVER,
        params=(
            TICKER_REQ,
            Param(
                "filing_type",
                enum=("10-K", "10-Q", "8-K"),
                description="Form type (required without accession_number, which names the filing's).",
            ),
            Param(
                "year",
                "integer",
                min=1993,
                max=2100,
                description="Filing year (required without accession_number, which names the filing's).",
            ),
            Param("quarter", "integer", min=1, max=4, description="Fiscal quarter (10-Q)."),
            Param(
                "item",
                repeatable=True,
                enum=FILING_ITEMS_10K + FILING_ITEMS_10Q + FILING_ITEMS_8K,
                description="Item(s) to return; all when absent.",
            ),
            Param(
                "accession_number",
                description="A specific filing (an 8-K of several that year); on its own it finds the filing.",
            ),
            Param("include_exhibits", "boolean", default=False, description="Include exhibit text (8-K)."),
        ),
        # the documents require filing_type and year; an accession number names one filing, so fdkit asks neither
        one_of=(("filing_type", "accession_number"), ("year", "accession_number")),
        context_fields=("ticker", "filing_type", "accession_number", "filing_date", "year", "quarter"),
        list_payload=True,
        dataset="filing_items",
        summary="Text sections (items) of a 10-K, 10-Q or 8-K, by form type and year or by accession number.",
    ),
    # --- ownership ----------------------------------------------------------------------------------------
    Endpoint(
        name="insider_trades",
        path="/insider-trades",
        response_key="insider_trades",
        schema="insider_trades",
        index=("ticker", "filing_date"),
        params=(
            TICKER_REQ,
            _limit(10, 1000),
            Param("name", description="Insider name."),
            Param("transaction_type", description="Transaction type, e.g. Sale."),
            *FILING_DATE_FILTERS,
        ),
        default_limit=10,
        dataset="insider_trades",
        summary="Insider transactions (Forms 3/4/5, table I and II rows with a transaction).",
    ),
    Endpoint(
        name="insider_ownership",
        path="/insider-ownership",
        response_key="insider_ownership",
        schema="insider_ownership",
        index=("ticker", "filing_date"),
        params=(TICKER_REQ, _limit(10, 1000), Param("name", description="Insider name."), *FILING_DATE_FILTERS),
        default_limit=10,
        dataset="insider_ownership",
        summary="Holdings insiders report on Forms 3 and 5 (and their amendments), as of as_of_date; "
        "a Form 4's resulting position is in insider trades (shares_owned_after_transaction).",
    ),
    Endpoint(
        name="institutional_ownership",
        path="/institutional-ownership",
        response_key="institutional-ownership",
        schema="institutional_ownership",
        index=("ticker", "report_period"),
        params=(
            Param("investor", description="Investment manager (as in /institutional-ownership/investors)."),
            TICKER,
            _limit(10, 1000),
            *REPORT_PERIOD_FILTERS,
        ),
        default_limit=10,
        one_of=(("investor", "ticker"),),
        dataset="institutional_ownership",
        summary="13F holdings by investor and/or ticker.",
        split_adjusted=True,
    ),
    Endpoint(
        name="institutional_holdings",
        path="/institutional-holdings",
        response_key="institutional_holdings",
        schema="institutional_holdings",
        index=("ticker", "report_period"),
        params=(
            TICKER,
            Param(
                "filer_cik",
                description="The filer's SEC CIK (10 digits; shorter ones are zero-padded).",
                example="0001790837",
            ),
            _limit(10, 200),
            *REPORT_PERIOD_FILTERS,
        ),
        page_size=None,
        default_limit=10,
        one_of=(("ticker", "filer_cik"),),
        dataset="institutional_ownership",
        tickers_listing="institutional_holdings_tickers",
        context_fields=("filer_cik",),
        summary="13F positions in the 2026 record shape: by held ticker (with the filer) or by filer CIK; newest "
        "report first, largest position first.",
        split_adjusted=True,
    ),
    Endpoint(
        name="index_funds",
        path="/index-funds",
        response_key="holdings",
        schema="index_funds",
        index=("fund", "ticker"),
        kind="object",  # one document per request; limit and offset slice it in the handler
        list_payload=True,
        params=(
            Param("ticker", description="A fund's ticker (e.g. SPY): its holdings.", example="SPY"),
            Param("holding", description="A held security's ticker: the funds that hold it."),
            Param("as_of", "date", description="The holdings known on this day (default: the latest)."),
            Param("asset_class", enum=("equity", "bond"), description="Only holdings of this asset class."),
            _limit(50, 1000),
            Param("offset", "integer", default=0, min=0, max=1_000_000, description="Rows to skip."),
        ),
        page_size=None,
        default_limit=50,
        one_of=(("ticker", "holding"),),
        exclusive=(("ticker", "holding"),),
        dataset="index_funds",
        shape="index_funds",
        tickers_listing="index_funds_tickers",
        summary="Index fund holdings: a fund's holdings (ticker=) or the funds holding a security (holding=). "
        "The reference data holds SPY as S&P 500 membership (weights, values and shares not published there).",
        response_schema={
            "oneOf": [
                {
                    "type": "object",
                    "required": ["ticker", "fund", "holdings"],
                    "properties": {
                        "ticker": {"type": "string"},
                        "fund": {
                            "type": "object",
                            "properties": {
                                **{k: {"type": "string"} for k in ("name", "cik", "asset_class", "source")},
                                "as_of": {"type": "string", "format": "date"},
                                "filing_date": {"type": ["string", "null"], "format": "date"},
                                "total_net_assets": {"type": ["number", "null"]},
                                **{
                                    k: {"type": "integer"}
                                    for k in ("total_holdings", "holdings_resolved", "returned", "offset")
                                },
                            },
                        },
                        "holdings": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {
                                    **{k: {"type": ["string", "null"]} for k in ("ticker", "name", "cusip", "isin")},
                                    **{k: {"type": ["number", "null"]} for k in ("weight", "market_value", "shares")},
                                    "asset_class": {"type": "string"},
                                    "resolution_status": {"type": "string"},
                                },
                            },
                        },
                    },
                },
                {
                    "type": "object",
                    "required": ["holding", "security", "funds"],
                    "properties": {
                        "holding": {"type": "string"},
                        "security": {
                            "type": "object",
                            "properties": {
                                "ticker": {"type": "string"},
                                **{k: {"type": ["string", "null"]} for k in ("name", "cusip", "isin")},
                                **{k: {"type": "integer"} for k in ("total_funds", "returned", "offset")},
                            },
                        },
                        "funds": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {
                                    **{
                                        k: {"type": ["string", "null"]}
                                        for k in ("ticker", "name", "cik", "asset_class", "as_of", "filing_date")
                                    },
                                    **{k: {"type": ["number", "null"]} for k in ("weight", "market_value", "shares")},
                                },
                            },
                        },
                    },
                },
            ]
        },
    ),
    # --- company ------------------------------------------------------------------------------------------
    _snapshot(
        "company_facts",
        "/company/facts",
        "company_facts",
        "company_facts",
        "Company facts.",
        params=(TICKER, CIK),
        one_of=(("ticker", "cik"),),
        exclusive=(("ticker", "cik"),),
        dataset="company_facts",
        index=("ticker",),
        tier="free",
        ttl=7 * DAY,
        ticker_param="ticker",
    ),
    # --- macro --------------------------------------------------------------------------------------------
    Endpoint(
        name="interest_rates",
        path="/macro/interest-rates",
        response_key="interest_rates",
        schema="interest_rates",
        index=("bank", "date"),
        params=(
            Param("bank", required=True, description="Central bank code, e.g. FED, ECB.", example="FED"),
            *START_END,
        ),
        page_size=None,
        newest_first=False,
        dataset="interest_rates",
        tier="free",
        ticker_param="bank",
        summary="Policy-rate history of a central bank (one row per change).",
    ),
    _snapshot(
        "interest_rate_snapshot",
        "/macro/interest-rates/snapshot",
        "interest_rates",
        "interest_rates",
        "Current policy rate of a central bank, or of every bank when none is named.",
        params=(Param("bank", description="Central bank code (default: every bank).", example="ECB"),),
        dataset="interest_rates",
        index=("bank", "date"),
        tier="free",
        ticker_param="bank",
        list_payload=True,
    ),
    _snapshot(
        "inflation_snapshot",
        "/macro/inflation/snapshot",
        "inflation",
        "inflation",
        "Latest inflation print: one entry per series.",
        dataset="inflation",
        index=("series", "date"),
        ttl=HOUR,
        list_payload=True,
    ),
    _snapshot(
        "labor_snapshot",
        "/macro/labor/snapshot",
        "labor",
        "labor",
        "Latest labour-market print.",
        dataset="labor",
        index=("series", "date"),
        ttl=HOUR,
        list_payload=True,
    ),
    _series_history(
        "inflation",
        "/macro/inflation",
        INFLATION_SERIES,
        "Consumer price index history (monthly levels; changes against the month and year before, by date).",
    ),
    _series_history(
        "labor",
        "/macro/labor",
        LABOR_SERIES,
        "Labour-market history (BLS via FRED): payrolls, unemployment, participation, earnings, openings, claims; "
        "change from the prior period and from a year earlier (in percent too, but for series measured in percent).",
    ),
    _snapshot(
        "yield_curve_snapshot",
        "/macro/yield-curve/snapshot",
        "yield_curve",
        "yield_curve",
        "Latest Treasury par yield curve (one key per tenor).",
        dataset="yield_curve",
        index=("date",),
        ttl=HOUR,
    ),
    Endpoint(
        name="yield_curve",
        path="/macro/yield-curve",
        response_key="yield_curve",
        schema="yield_curve",
        index=("date",),
        params=(*START_END, _limit(5000, 5000)),
        page_size=100,
        default_limit=5000,
        newest_first=False,
        dataset="yield_curve",
        tier="free",
        ticker_param=None,
        record_key=("date",),
        summary="Treasury par yield curve history.",
    ),
    Endpoint(
        name="statement_vintages",
        path="/financials/vintages",
        response_key="statement_vintages",
        schema="statement_vintages",
        index=("ticker", "report_period"),
        params=(
            TICKER_REQ,
            Param("field", description="A statement field (revenue, net_income, total_assets, ...)."),
            Param(
                "period",
                enum=("annual", "quarterly", "instant"),
                description="annual and quarterly durations, or balance-sheet instants.",
            ),
            *REPORT_PERIOD_FILTERS,
            *FILING_DATE_FILTERS,
            _limit(1000, 10000),
        ),
        page_size=500,
        default_limit=1000,
        newest_first=False,
        dataset="statement_vintages",
        record_key=("ticker", "field", "period", "report_period", "filing_date", "accession_number"),
        split_adjusted=True,
        summary="Every reported value of a statement field with the filing that reported it: the first report and "
        "each restatement (an fdkit extension). filing_date_lte=D gives what was known on D.",
    ),
    _corporate_actions(
        "splits",
        "Stock splits (an fdkit extension): ex-date and ratio of new to old shares, with "
        "the source. Prices and per-share statement values are on the basis of every split listed "
        "here.",
    ),
    _corporate_actions(
        "dividends",
        "Cash dividends per share by ex-date (an fdkit extension), on the split basis "
        "of prices. The service's daily prices are already adjusted for them: add them only to raw "
        "closes.",
        split_adjusted=True,
    ),
    Endpoint(
        name="price_history",
        path="/prices/history",
        response_key="prices",
        schema="price_history",
        index=("ticker", "date"),
        params=(TICKER_REQ, *START_END, _limit(5000, 10000)),
        page_size=5000,
        default_limit=5000,
        newest_first=False,
        dataset="price_history",
        tier="free",
        record_key=("ticker", "date"),
        ttl=DAY,
        summary="Daily closes 2004-2025 of every company ever in the S&P 500/400/600, dead ones until they stopped "
        "trading (an fdkit extension, served when the fdkit-history package is installed). close is the as-traded "
        "close on today's split basis, missing where no raw close exists; adj_close the split- and "
        "dividend-adjusted close on the basis of adjusted_as_of (returns are comparable within one basis); basis "
        "says which the row has (as_traded, adjusted_only, price_only); price_source the dump it comes from.",
        package="fdkit-history",
    ),
    _corporate_actions(
        "delistings",
        "The last trading day of a company of the price history that stopped "
        "trading (an fdkit extension, with the fdkit-history package): its last bar and its adjusted "
        "close; delisting_kind the company's end (acquired, bankrupt, unknown) or sources_end where its bars "
        "stop only because the sources do; reason a sentence; delisting_return missing where no source gives "
        "the consideration (delisting_return_note says why).",
        package="fdkit-history",
    ),
    Endpoint(
        name="index_members",
        path="/index-members",
        response_key="index_members",
        schema="index_members",
        index=("ticker", "start_date"),
        params=(
            Param(
                "index",
                required=True,
                enum=("sp500", "sp400", "sp600", "sp1500"),
                description="The index: S&P 500, 400 (mid caps), 600 (small caps), or 1500 (the three).",
            ),
            Param(
                "date",
                type="date",
                description="The members on this day (YYYY-MM-DD); without it, every "
                "membership spell of the index's history.",
            ),
        ),
        page_size=None,
        dataset="index_membership",
        tier="free",
        ticker_param=None,
        ttl=DAY,
        record_key=("index", "ticker_then", "start_date"),
        summary="Point-in-time index membership (an fdkit extension): the members of an index on a day, dead "
        "companies included, or every membership spell. ticker is the symbol that works in every endpoint today "
        "(a renamed company's new symbol); ticker_then the symbol of the time.",
    ),
    # --- estimates, earnings, KPIs ------------------------------------------------------------------------
    Endpoint(
        name="analyst_estimates",
        path="/analyst-estimates",
        response_key="analyst_estimates",
        schema="analyst_estimates",
        index=("ticker", "fiscal_period"),
        params=(TICKER_REQ, Param("period", enum=("annual", "quarterly"), default="annual"), _limit(10)),
        default_limit=10,
        dataset="analyst_estimates",
        summary="Forward revenue and EPS estimates (the service's own documented model).",
    ),
    Endpoint(
        name="earnings",
        path="/earnings",
        response_key="earnings",
        schema="earnings",
        index=("ticker", "report_period"),
        params=(TICKER_REQ, _limit(10)),
        default_limit=10,
        dataset="earnings",
        shape="earnings",
        summary="Earnings releases: reported figures per quarter with the annual context.",
        split_adjusted=True,
    ),
    _kpi("kpi_guidance", "/kpi/guidance", "Forward guidance by metric."),
    _kpi("kpi_non_gaap", "/kpi/non-gaap", "Non-GAAP metrics."),
    _kpi("kpi_metrics", "/kpi/metrics", "Operating KPIs."),
    # --- listings (no key needed) -------------------------------------------------------------------------
    _listing(
        "segmented_revenues_tickers",
        "/financials/segmented-revenues/tickers",
        "tickers",
        "segmented_revenues",
        "Tickers with segmented revenues.",
    ),
    _listing(
        "balance_sheets_tickers",
        "/financials/balance-sheets/tickers",
        "tickers",
        "balance_sheets",
        "Tickers with financial statements.",
    ),
    _listing(
        "financial_metrics_snapshot_tickers",
        "/financial-metrics/snapshot/tickers",
        "tickers",
        "financial_metrics",
        "Tickers with a financial metrics snapshot.",
    ),
    _listing(
        "company_facts_tickers", "/company/facts/tickers", "tickers", "company_facts", "Tickers with company facts."
    ),
    _listing("company_facts_ciks", "/company/facts/ciks", "ciks", "company_facts", "CIKs with company facts."),
    _listing("filings_tickers", "/filings/tickers", "tickers", "filings", "Tickers with filings."),
    _listing("prices_tickers", "/prices/tickers", "tickers", "prices", "Tickers with prices."),
    _listing(
        "price_snapshot_tickers", "/prices/snapshot/tickers", "tickers", "prices", "Tickers with a price snapshot."
    ),
    _listing(
        "crypto_prices_tickers", "/crypto/prices/tickers", "tickers", "crypto_prices", "Crypto tickers with prices."
    ),
    _listing(
        "institutional_ownership_investors",
        "/institutional-ownership/investors",
        "investors",
        "institutional_ownership",
        "Investment managers with 13F holdings.",
    ),
    _listing(
        "institutional_ownership_tickers",
        "/institutional-ownership/tickers",
        "tickers",
        "institutional_ownership",
        "Tickers held in 13F filings.",
    ),
    _listing(
        "interest_rates_banks", "/macro/interest-rates/banks", "banks", "interest_rates", "Central banks with rates."
    ),
    _listing(
        "analyst_estimates_tickers",
        "/analyst-estimates/tickers",
        "tickers",
        "analyst_estimates",
        "Tickers with analyst estimates.",
    ),
    _listing(
        "analyst_estimates_periods",
        "/analyst-estimates/periods",
        "periods",
        None,
        "Periods analyst estimates are given for.",
    ),
    _listing(
        "insider_trades_names",
        "/insider-trades/names",
        "names",
        "insider_trades",
        "Insider names, optionally for one ticker.",
        params=(TICKER,),
    ),
    _listing(
        "insider_trades_transaction_types",
        "/insider-trades/transaction-types",
        "transaction_types",
        "insider_trades",
        "Transaction types that appear in insider trades.",
    ),
    _listing("earnings_tickers", "/earnings/tickers", "tickers", "earnings", "Tickers with earnings releases."),
    _listing(
        "splits_tickers", "/splits/tickers", "tickers", "splits", "Tickers with stock splits (an fdkit extension)."
    ),
    _listing(
        "dividends_tickers",
        "/dividends/tickers",
        "tickers",
        "dividends",
        "Tickers with cash dividends (an fdkit extension).",
    ),
    _listing("filings_ciks", "/filings/ciks", "ciks", "filings", "CIKs with filings."),
    _listing("filings_types", "/filings/types", "filing_types", "filings", "Form types that appear in filings."),
    _listing(
        "institutional_holdings_tickers",
        "/institutional-holdings/tickers",
        "tickers",
        "institutional_ownership",
        "Tickers held in 13F filings.",
    ),
    _listing(
        "institutional_holdings_investors",
        "/institutional-holdings/investors",
        "investors",
        "institutional_ownership",
        "13F filers: {cik, name}, optionally those whose name contains `name`.",
        params=(Param("name", description="Part of the filer's name (case-insensitive)."),),
        response_schema={
            "type": "object",
            "required": ["investors"],
            "properties": {
                "resource": {"type": "string"},
                "investors": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"cik": {"type": ["string", "null"]}, "name": {"type": "string"}},
                    },
                },
            },
        },
    ),
    _listing("index_funds_tickers", "/index-funds/tickers", "tickers", "index_funds", "Funds with holdings."),
    # the two listings the 2026 document neither exempts from its key (security: []) nor calls keyless
    _listing(
        "kpi_metrics_tickers",
        "/kpi/metrics/tickers",
        "tickers",
        "kpi_metrics",
        "Tickers with operating KPIs (empty where the lake has none).",
        auth=True,
    ),
    _listing(
        "kpi_metrics_sectors",
        "/kpi/metrics/sectors",
        "sectors",
        "kpi_metrics",
        "Sectors of the companies with operating KPIs (empty where the lake has none).",
        auth=True,
    ),
    _listing(
        "filing_items_types",
        "/filings/items/types",
        "",
        None,
        "The item names /filings/items accepts, with their titles, by form type.",
        params=(Param("filing_type", enum=("10-K", "10-Q", "8-K"), description="One form type (default: all)."),),
        response_schema={
            "type": "object",
            "additionalProperties": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["name", "title"],
                    "properties": {
                        "name": {"type": "string"},
                        "title": {"type": "string"},
                        "description": {"type": "string"},
                    },
                },
            },
        },
    ),
    _listing(
        "screener_filters",
        "/financials/search/screener/filters",
        "",
        None,
        "The fields the screener filters on (with the statement each comes from; an alias names the metric it "
        "stands for) and its operators.",
        response_schema={
            "type": "object",
            "required": ["metrics", "operators"],
            "properties": {
                "metrics": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "object",
                        "properties": {
                            "type": {"type": "string"},
                            "source": {"type": "string"},
                            "alias_of": {"type": "string"},
                        },
                    },
                },
                "operators": {"type": "array", "items": {"type": "string"}},
            },
        },
    ),
)


# ---------------------------------------------------------------------------------------------------------
# examples: one valid request (None: the reference data has none) and one invalid request (-> 400) per endpoint
# ---------------------------------------------------------------------------------------------------------
_VALID: dict[str, dict[str, Any] | None] = {
    "income_statements": {"ticker": "AAPL", "period": "annual"},
    "balance_sheets": {"ticker": "NVDA", "period": "quarterly", "limit": 12},
    "cash_flow_statements": {"cik": "0000320193", "period": "ttm"},
    "segmented_revenues": {"ticker": "AAPL", "period": "annual", "report_period": "2023-09-30"},
    "income_statement_segments": {"ticker": "AAPL", "period": "annual"},
    "balance_sheet_segments": {"ticker": "AAPL", "period": "annual"},
    "cash_flow_statement_segments": {"ticker": "AAPL", "period": "annual"},
    "financial_metrics": {"ticker": "AAPL", "period": "annual", "limit": 5},
    "segmented_financials": {"ticker": "AAPL", "period": "annual"},
    "as_reported_income_statements": {"ticker": "AAPL", "period": "annual"},
    "as_reported_balance_sheets": {"ticker": "NVDA", "period": "quarterly", "limit": 2},
    "as_reported_cash_flow_statements": {"ticker": "AAPL", "period": "annual", "report_period_gte": "2020-01-01"},
    "as_reported_financials": {"ticker": "GOOGL", "period": "annual", "limit": 2},
    "financial_statements": {"ticker": "AAPL", "period": "annual", "limit": 2},
    "financial_metrics_snapshot": {"ticker": "NVDA"},
    "screen": {"filters": [{"field": "revenue", "operator": "gt", "value": 1e11}], "period": "annual"},
    "line_items": {"tickers": ["AAPL", "NVDA"], "line_items": ["revenue", "net_income"], "period": "annual"},
    "financials_search": {
        "filters": [{"field": "revenue", "operator": "gt", "value": 1e11}],
        "period": "annual",
        "order_by": "-ticker",
    },
    "prices": {"ticker": "AAPL", "interval": "day", "start_date": "2023-01-03", "end_date": "2023-01-31"},
    "crypto_prices": {
        "ticker": "BTC-USD",
        "interval": "day",
        "interval_multiplier": 1,
        "start_date": "2024-01-01",
        "end_date": "2024-01-31",
    },
    "price_snapshot": {"ticker": "TSLA"},  # a bar as traded the session before: its change is known
    "crypto_price_snapshot": {"ticker": "BTC-USD"},
    "market_price_snapshot": {},
    "filings": {"ticker": "AAPL", "filing_type": ["10-K", "10-Q"], "limit": 12},
    "ipos": {"limit": 5},
    "filing_items": {"ticker": "AAPL", "filing_type": "10-K", "year": 2024, "item": ["Item-1A"]},
    "insider_trades": {"ticker": "AAPL"},
    "insider_ownership": {"ticker": "SNOW"},
    "institutional_ownership": {"ticker": "AAPL"},
    "institutional_holdings": {"ticker": "AAPL", "limit": 20},
    "index_funds": {"ticker": "SPY", "limit": 10},
    "company_facts": {"ticker": "AAPL"},
    "interest_rates": {"bank": "FED", "start_date": "2015-01-01"},
    "interest_rate_snapshot": {"bank": "ECB"},
    "inflation_snapshot": {},
    "labor_snapshot": {},
    "yield_curve_snapshot": {},
    "yield_curve": {"start_date": "2023-01-01", "end_date": "2023-03-31"},
    "inflation": {"series": "cpi_core", "start_date": "2022-01-01", "end_date": "2022-12-31"},
    "splits": {"ticker": "NVDA"},
    "price_history": {"ticker": "LEH", "start_date": "2008-09-01", "end_date": "2008-09-30"},
    "delistings": {"ticker": "LEH"},
    "dividends": {"ticker": "AAPL", "start_date": "2020-01-01"},
    "index_members": {"index": "sp500", "date": "2016-06-30"},
    "statement_vintages": {"ticker": "AAPL", "field": "revenue", "period": "annual", "report_period": "2009-09-26"},
    "labor": {"series": "unemployment_rate", "start_date": "2020-01-01", "end_date": "2020-12-31"},
    "analyst_estimates": {"ticker": "AAPL"},
    "earnings": {"ticker": "NVDA", "limit": 4},
    "kpi_guidance": {"ticker": "AAPL"},
    "kpi_non_gaap": {"ticker": "AAPL"},
    "kpi_metrics": {"ticker": "AAPL"},
}

_INVALID: dict[str, dict[str, Any] | None] = {
    "income_statements": {"ticker": "AAPL", "period": "weekly"},
    "balance_sheets": {"ticker": "AAPL", "period": "annual", "report_period_lt": "last year"},
    "cash_flow_statements": {"ticker": "AAPL", "cik": "320193", "period": "annual"},
    "segmented_revenues": {"ticker": "AAPL", "period": "ttm"},
    "income_statement_segments": {"ticker": "AAPL", "period": "annual", "limit": 0},
    "balance_sheet_segments": {"period": "annual"},  # neither ticker nor cik
    "cash_flow_statement_segments": {"ticker": "AAPL", "period": "annual", "report_period_gte": "2024-02-30"},
    "financial_metrics": {"ticker": "AAPL", "period": "annual", "limit": "ten"},
    "segmented_financials": {"ticker": "AAPL", "period": "ttm"},
    "as_reported_income_statements": {"ticker": "AAPL", "period": "ttm"},
    "as_reported_balance_sheets": {"period": "annual"},
    "as_reported_cash_flow_statements": {"ticker": "AAPL", "limit": 0},
    "as_reported_financials": {"ticker": "AAPL", "report_period": "2024-09"},
    "financial_statements": {"ticker": "AAPL", "cik": "0000320193", "period": "annual"},
    "financial_metrics_snapshot": {"ticker": "AAPL", "cik": "0000320193"},
    "screen": {"filters": []},
    "line_items": {"tickers": ["AAPL"]},
    "financials_search": {"filters": [{"field": "revenue", "operator": "gt", "value": 1}], "order_by": "price"},
    "prices": {"ticker": "AAPL", "interval": "day", "start_date": "2023-01-03"},
    "crypto_prices": {
        "ticker": "BTC-USD",
        "interval": "day",
        "start_date": "2024-01-01",
        "end_date": "2024-01-31",
        "limit": "many",
    },
    "price_snapshot": {},
    "crypto_price_snapshot": {},
    "market_price_snapshot": None,  # no parameters: every name is ignored, nothing can be a 400
    "news": {"ticker": "AAPL", "limit": 0},
    "filings": {},
    "ipos": {"filing_date": "2024-02-30"},
    "filing_items": {"ticker": "AAPL", "filing_type": "20-F", "year": 2024},
    "insider_trades": {"ticker": "AAPL", "filing_date_gte": "yesterday"},
    "insider_ownership": {"ticker": "AAPL", "limit": -1},
    "institutional_ownership": {},
    "institutional_holdings": {"ticker": "AAPL", "report_period_gte": "2023-13-01"},
    "index_funds": {"ticker": "SPY", "holding": "AAPL"},
    "company_facts": {},
    "interest_rates": {},
    "interest_rate_snapshot": None,  # no bank: every bank's current rate (the seed documents no 400 for it)
    "inflation_snapshot": None,  # no parameters: every name is ignored, nothing can be a 400
    "labor_snapshot": None,
    "yield_curve_snapshot": None,
    "yield_curve": {"limit": 0},
    "inflation": {"series": "cpi_gold"},
    "splits": {},
    "price_history": {"ticker": "AAPL", "end_date": "2008-02-30"},
    "delistings": {},
    "dividends": {"ticker": "AAPL", "start_date": "2020-13-01"},
    "index_members": {"index": "nasdaq100", "date": "2016-06-30"},
    "statement_vintages": {"ticker": "AAPL", "period": "weekly"},
    "labor": {"start_date": "2020-02-30"},
    "analyst_estimates": {"ticker": "AAPL", "period": "ttm"},
    "earnings": {"ticker": "AAPL", "limit": 1.5},
    "kpi_guidance": {"ticker": "AAPL", "period": "weekly"},
    "kpi_non_gaap": {"ticker": "AAPL", "report_period_gte": "01/01/2024"},
    "kpi_metrics": {},
}


_FILED = tuple(p.name for p in FILING_DATE_FILTERS)
_REPORTED = tuple(p.name for p in REPORT_PERIOD_FILTERS)
#: the parameters of a documented path that its document does not list (see ``Endpoint.extension_params``)
_EXTENSION_PARAMS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        **{
            name: _FILED
            for name in (
                "income_statements",
                "balance_sheets",
                "cash_flow_statements",
                "income_statement_segments",
                "balance_sheet_segments",
                "cash_flow_statement_segments",
                "segmented_financials",
                "financial_statements",
                "as_reported_income_statements",
                "as_reported_balance_sheets",
                "as_reported_cash_flow_statements",
                "as_reported_financials",
                "financial_metrics",
            )
        },
        "segmented_revenues": _FILED + _REPORTED,
        "screen": ("currency", "filing_date_lte", "period"),
        "financials_search": ("filing_date_lte",),
        "line_items": ("end_date", "filing_date_lte"),
        # (interval_multiplier is sent: the 2025 document requires it, so a service built on it refuses /prices
        # without it, and the 2026 one ignores it as it ignores any extra)
        "prices": ("label", "limit", "adjusted"),
        "crypto_prices": ("label",),
        "news": ("start_date", "end_date"),
        "institutional_ownership": _REPORTED,
    }
)


def _with_examples(ep: Endpoint) -> Endpoint:
    valid = _VALID.get(ep.name, {} if ep.kind == "listing" else None)
    invalid = _INVALID.get(ep.name)
    return replace(
        ep,
        examples=ep.examples or ((valid,) if valid is not None else ()),
        invalid_examples=ep.invalid_examples or ((invalid,) if invalid is not None else ()),
        extension_params=ep.extension_params or _EXTENSION_PARAMS.get(ep.name, ()),
    )


def _check(endpoints: tuple[Endpoint, ...]) -> Mapping[str, Endpoint]:
    names: dict[str, Endpoint] = {}
    paths: set[tuple[str, str]] = set()
    for ep in endpoints:
        if ep.name in names:
            raise ValueError(f"duplicate endpoint name {ep.name}")
        if (ep.method, ep.path) in paths:
            raise ValueError(f"duplicate endpoint path {ep.method} {ep.path}")
        if ep.path.endswith("/"):
            raise ValueError(f"{ep.path}: catalog paths carry no trailing slash")
        names[ep.name] = ep
        paths.add((ep.method, ep.path))
    return MappingProxyType(names)


#: every endpoint, by public name
CATALOG: Mapping[str, Endpoint] = _check(tuple(_with_examples(ep) for ep in _ENDPOINTS))


def get(name: str) -> Endpoint:
    """Look an endpoint up by its public name.

    Args:
        name: e.g. ``"balance_sheets"``.

    Returns:
        The :class:`Endpoint`.

    Raises:
        UnknownNameError: (a ``KeyError`` and ``ValueError``) naming the unknown endpoint, closest names first.

    Example:
        >>> get("news").path
        '/news'
    """
    try:
        return CATALOG[name]
    except KeyError:
        raise UnknownNameError(f"unknown endpoint {name!r}; {suggest(str(name), CATALOG, most=40)}") from None


def by_path(path: str, method: str = "GET") -> Endpoint:
    """Look an endpoint up by its path (a trailing slash is ignored).

    Args:
        path: e.g. ``"/prices/"``.
        method: HTTP method.

    Returns:
        The :class:`Endpoint`.

    Example:
        >>> by_path("/company/facts/tickers/").kind
        'listing'
    """
    norm = "/" + path.strip("/")
    for ep in CATALOG.values():
        if ep.path == norm and ep.method == method.upper():
            return ep
    raise KeyError(f"no endpoint {method} {path}")


def tickers_listed_by(path: str) -> str | None:
    """The dataset name whose tickers ``fdkit.available(name)`` lists, for the endpoint at ``path`` (if any).

    Args:
        path: a request path, e.g. ``"/prices"``.

    Returns:
        The name to give :func:`fdkit.available`, or ``None`` where no listing names the endpoint's tickers.

    Example:
        >>> tickers_listed_by("/financials/income-statements"), tickers_listed_by("/macro/interest-rates")
        ('balance_sheets', None)
    """
    for method in ("GET", "POST"):
        try:
            listing = listing_for(by_path(path, method).name, "tickers")
        except (KeyError, ValueError):
            continue
        return listing.name.removesuffix("_tickers")  # one name per listing, whichever endpoint failed
    return None


def listing_for(resource: str, what: str = "tickers") -> Endpoint:
    """Find the listing endpoint that names what a dataset has (tickers, ciks, banks...).

    Args:
        resource: a dataset name (``"prices"``) or a listing endpoint's own name.
        what: the listing's response key: ``tickers``, ``ciks``, ``banks``, ``investors``, ``periods``,
            ``names`` or ``transaction_types``.

    Returns:
        The listing :class:`Endpoint`.

    Raises:
        UnknownNameError: a ``ValueError`` (and ``KeyError``) naming the resources that have such a listing.

    Example:
        >>> listing_for("interest_rates", "banks").path
        '/macro/interest-rates/banks'
    """
    if resource in CATALOG and CATALOG[resource].kind == "listing":
        return CATALOG[resource]
    listings = [ep for ep in CATALOG.values() if ep.kind == "listing"]
    candidates = [ep for ep in listings if ep.name == f"{resource}_{what}"] or [
        ep for ep in listings if ep.dataset == resource and ep.response_key == what
    ]
    source = CATALOG.get(resource)
    if not candidates and source is not None and what == "tickers" and source.tickers_listing:
        candidates = [CATALOG[source.tickers_listing]]
    if not candidates:
        answerable = sorted(
            {ep.dataset for ep in listings if ep.dataset and ep.response_key == what}
            | {ep.name for ep in CATALOG.values() if what == "tickers" and ep.tickers_listing}
            | {ep.name for ep in listings}
        )
        raise UnknownNameError(
            f"no listing of {what} for {resource!r}; {suggest(resource, answerable, most=40)}",
            error="Unknown listing",
        )
    return candidates[0]
