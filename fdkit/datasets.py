"""Public dataset functions, generated from the endpoint catalog.

Each catalog entry (listings aside) becomes ``fdkit.<name>(...)`` and ``Client.<name>(...)``. Parameters keep the
service's names; the ticker (or bank) parameter also accepts a list, fetched concurrently with a bounded pool,
failures collected per ticker (``errors="raise"|"warn"|"ignore"``). ``raw=True`` returns the decoded JSON (a list
of bodies for a list of tickers). Listings are reached with :func:`available`.

Example:
    >>> import fdkit
    >>> df = fdkit.prices(["AAPL", "MSFT"], start_date="2024-01-02", end_date="2024-01-05")
    >>> df.index.names, len(df)
    (FrozenList(['ticker', 'time']), 8)
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from datetime import date
from typing import Any

import pandas as pd

from . import catalog as _catalog
from .catalog import CATALOG, Endpoint
from .client import Client, default_client
from .errors import BadRequestError
from .frames import exhibits_frame, fetch_part, frame_from_parts, to_frame

__all__ = ["DATASETS", "available", "financials", "filing_exhibits", "bind_client_methods"]

#: convenient defaults the service leaves to the caller (``Param.client_default`` in the catalog)
_DEFAULTS: dict[str, dict[str, Any]] = {
    ep.name: {p.name: p.client_default for p in ep.params if p.client_default is not None} for ep in CATALOG.values()
}

#: doc examples (all answer on the bundled reference data)
_DOC_EXAMPLES: dict[str, str] = {
    "income_statements": 'ticker="AAPL", period="annual", limit=3',
    "balance_sheets": 'ticker=["AAPL", "NVDA"], period="quarterly", limit=2',
    "cash_flow_statements": 'ticker="NVDA", period="ttm", limit=2',
    "segmented_revenues": 'ticker="AAPL", period="annual", limit=1',
    "income_statement_segments": 'ticker="AAPL", period="annual", limit=1',
    "balance_sheet_segments": 'ticker="AAPL", period="annual"',
    "cash_flow_statement_segments": 'ticker="AAPL", period="annual"',
    "financial_metrics": 'ticker="AAPL", period="annual", limit=2',
    "screen": 'filters=[{"field": "revenue", "operator": "gt", "value": 1e11}], period="annual"',
    "line_items": 'tickers=["AAPL", "NVDA"], line_items=["revenue", "net_income"], period="annual"',
    "prices": 'ticker=["AAPL", "MSFT"], start_date="2024-01-02", end_date="2024-01-31"',
    "crypto_prices": 'ticker="BTC-USD", start_date="2024-01-01", end_date="2024-01-31"',
    "price_snapshot": 'ticker=["AAPL", "MSFT"]',
    "news": 'ticker="AAPL", limit=5',
    "filings": 'ticker="AAPL", filing_type="10-K", limit=3',
    "filing_items": 'ticker="AAPL", filing_type="10-K", year=2024, item=["Item-1A"]',
    "insider_trades": 'ticker="AAPL"',
    "insider_ownership": 'ticker="SNOW"',
    "institutional_ownership": 'ticker="AAPL"',
    "company_facts": 'ticker=["AAPL", "NVDA"]',
    "interest_rates": 'bank=["FED", "ECB"], start_date="2020-01-01"',
    "interest_rate_snapshot": 'bank="FED"',
    "inflation_snapshot": "",
    "labor_snapshot": "",
    "yield_curve_snapshot": "",
    "yield_curve": 'start_date="2023-01-01", end_date="2023-01-31"',
    "analyst_estimates": 'ticker="AAPL"',
    "earnings": 'ticker="NVDA", limit=4',
    "kpi_guidance": 'ticker="AAPL"',
    "kpi_non_gaap": 'ticker="AAPL"',
    "kpi_metrics": 'ticker="AAPL"',
}


def _normalise(value: Any) -> Any:
    if isinstance(value, pd.Timestamp | date):
        return value.isoformat()[:10]
    return value


def _call(
    client: Client,
    ep: Endpoint,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    *,
    raw: bool = False,
    errors: str = "raise",
    progress: bool | None = None,
) -> Any:
    params: dict[str, Any] = dict(_DEFAULTS.get(ep.name, {}))
    names = _positional(ep)
    if len(args) > len(names):
        raise TypeError(f"{ep.name}() takes at most {len(names)} positional arguments")
    params.update(zip(names, args, strict=False))
    dup = set(names[: len(args)]) & set(kwargs)
    if dup:
        raise TypeError(f"{ep.name}() got multiple values for {sorted(dup)}")
    params.update(kwargs)
    params = {k: _normalise(v) for k, v in params.items() if v is not None}
    missing = [p.name for p in ep.params if p.required and p.name not in params]
    if missing:
        raise BadRequestError(f"{ep.name}() needs {', '.join(map(repr, missing))}", error="Missing parameter",
                              path=ep.path)  # fmt: skip
    fan = ep.ticker_param
    many = fan is not None and isinstance(params.get(fan), list | tuple | set | pd.Index)
    if many:
        keys = list(dict.fromkeys(str(t).upper() for t in params[fan]))
        if not keys:
            raise BadRequestError(f"{ep.name}(): the list of {fan}s is empty", path=ep.path)
        requests_ = [{**params, fan: k} for k in keys]
    else:
        requests_ = [params]
    if raw or ep.kind == "search":
        ok, _failed = client.fetch_many(ep, requests_, errors=errors, progress=progress)  # type: ignore[arg-type]
        if raw:
            bodies = [body for _, body in ok]
            return bodies if many else (bodies[0] if bodies else None)
        return to_frame(ep, ok) if ok else to_frame(ep, [(params, {})])
    # typed parts: a warm request is read back as Arrow, with no JSON decode
    ok, _failed = client.fetch_many(
        ep,
        requests_,
        errors=errors,
        progress=progress,
        fetch=lambda p: fetch_part(client, ep, p),  # type: ignore[arg-type]
    )
    return frame_from_parts(ep, [part for _, part in ok], params)


def _positional(ep: Endpoint) -> list[str]:
    """Parameter order of a dataset function: the ticker (or bank) first, then the catalog's order."""
    return sorted(ep.param_names, key=lambda n: n != ep.ticker_param)


def _signature(ep: Endpoint) -> inspect.Signature:
    defaults = _DEFAULTS.get(ep.name, {})
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    out = []
    for name in _positional(ep):
        if name == ep.ticker_param and ep.param(name).required:
            out.append(inspect.Parameter(name, kind))
        else:
            out.append(inspect.Parameter(name, kind, default=defaults.get(name)))
    for name, default in (("raw", False), ("errors", "raise"), ("progress", None), ("client", None)):
        out.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default))
    return inspect.Signature(out)


#: endpoints whose example shows something other than a frame (no data in the reference lake)
_DOC_EXAMPLE_LINES: dict[str, list[str]] = {
    "labor_snapshot": [
        "    >>> import fdkit",
        "    >>> try:",
        "    ...     fdkit.labor_snapshot()",
        "    ... except fdkit.NotFoundError as exc:",
        "    ...     print(exc.message)",
        "    no labor data is served",
    ],
}


def _doc(ep: Endpoint) -> str:
    lines = [f"{ep.summary}", "", f"``{ep.method} {ep.path}`` -> a typed frame indexed ``{ep.index}``.", "",
             "Args:"]  # fmt: skip
    for p in ep.params:
        extra = []
        if p.required:
            extra.append("required")
        if p.enum:
            extra.append("one of " + ", ".join(p.enum[:8]) + (", ..." if len(p.enum) > 8 else ""))
        if p.default is not None:
            extra.append(f"default {p.default!r}")
        if p.name == ep.ticker_param:
            extra.append("a list fetches each concurrently")
        lines.append(f"    {p.name}: {p.description or p.type}" + (f" ({'; '.join(extra)})" if extra else ""))
    lines += [
        "    raw: return the decoded JSON instead of a frame.",
        "    errors: for a list of tickers, ``raise`` the first failure, or ``warn``/``ignore`` and skip it.",
        "    progress: progress bar (default: only on a terminal).",
        "",
        "Returns:",
        "    A DataFrame (or JSON with ``raw=True``).",
        "",
        "Raises:",
        "    BadRequestError: invalid parameters. NotFoundError: unknown ticker. FdkitError: any other failure.",
        "",
        "Example:",
        *_DOC_EXAMPLE_LINES.get(
            ep.name,
            [
                "    >>> import fdkit",
                f"    >>> df = fdkit.{ep.name}({_DOC_EXAMPLES.get(ep.name, '')})",
                "    >>> type(df).__name__",
                "    'DataFrame'",
            ],
        ),
    ]
    return "\n".join(lines)


def _make(ep: Endpoint) -> Callable[..., Any]:
    def dataset(*args: Any, raw: bool = False, errors: str = "raise", progress: bool | None = None,
                client: Client | None = None, **kwargs: Any) -> Any:  # fmt: skip
        return _call(client or default_client(), ep, args, kwargs, raw=raw, errors=errors, progress=progress)

    dataset.__name__ = dataset.__qualname__ = ep.name
    dataset.__doc__ = _doc(ep)
    dataset.__signature__ = _signature(ep)  # type: ignore[attr-defined]
    dataset.__module__ = "fdkit"
    dataset.endpoint = ep  # type: ignore[attr-defined]
    return dataset


#: the generated functions, by name
DATASETS: dict[str, Callable[..., Any]] = {name: _make(ep) for name, ep in CATALOG.items() if ep.kind != "listing"}


def available(resource: str, what: str = "tickers", *, client: Client | None = None, **params: Any) -> list[str]:
    """Call a listing endpoint: what a dataset has (tickers, ciks, banks, investors, names, ...).

    Args:
        resource: a dataset name such as ``"prices"`` or ``"interest_rates"``, or a listing's own name.
        what: ``tickers`` (default), ``ciks``, ``banks``, ``investors``, ``periods``, ``names`` or
            ``transaction_types``.
        client: the client (default: the default client).
        **params: listing parameters (``ticker`` for insider names).

    Returns:
        The names, sorted as the service gives them.

    Example:
        >>> import fdkit
        >>> fdkit.available("interest_rates", "banks")
        ['ECB', 'FED']
    """
    ep = _catalog.listing_for(resource, what)
    body = (client or default_client()).fetch(ep, params)
    return list(body.get(ep.response_key) or [])


def financials(
    ticker: str | Sequence[str],
    period: str = "annual",
    limit: int | None = None,
    *,
    client: Client | None = None,
    errors: str = "raise",
    **filters: Any,
) -> pd.DataFrame:
    """Income statement, balance sheet and cash flow joined per ``(ticker, report_period)``.

    The three statements are fetched concurrently per ticker and joined on ``(ticker, report_period)``; a field
    reported in two statements (``net_income``) keeps the income statement's value; filing metadata comes from the
    income statement.

    Args:
        ticker: one ticker or a list.
        period: ``annual``, ``quarterly`` or ``ttm``.
        limit: periods per ticker (the service's default is 4).
        client: the client (default: the default client).
        errors: for a list of tickers: ``raise``, ``warn`` or ``ignore`` failures.
        **filters: ``report_period_gte`` and the other report-period filters.

    Returns:
        One wide statement frame, sorted by ``(ticker, report_period)``.

    Example:
        >>> import fdkit
        >>> df = fdkit.financials("AAPL", period="annual", limit=2)
        >>> {"revenue", "total_assets", "free_cash_flow"} <= set(df.columns)
        True
    """
    c = client or default_client()
    frames = [
        DATASETS[name](ticker, period=period, limit=limit, client=c, errors=errors, progress=False, **filters)
        for name in ("income_statements", "balance_sheets", "cash_flow_statements")
    ]
    out = frames[0]
    for other in frames[1:]:
        new = [col for col in other.columns if col not in out.columns]
        out = out.join(other[new], how="outer")
    return out.sort_index()


def filing_exhibits(ticker: str, filing_type: str, year: int, *, client: Client | None = None,
                    **params: Any) -> pd.DataFrame:  # fmt: skip
    """Exhibits of a filing (with their text), one row per exhibit.

    Args:
        ticker: ticker.
        filing_type: ``10-K``, ``10-Q`` or ``8-K``.
        year: filing year.
        client: the client (default: the default client).
        **params: ``quarter``, ``item``, ``accession_number``.

    Returns:
        A frame indexed ``(ticker, filing_date)`` with ``accession_number``, ``item``, ``number``, ``description``,
        ``url``, ``text``.

    Example:
        >>> import fdkit
        >>> ex = fdkit.filing_exhibits("NVDA", "8-K", 2026)
        >>> list(ex.columns)[:2]
        ['accession_number', 'item']
    """
    c = client or default_client()
    query = {"ticker": ticker, "filing_type": filing_type, "year": year, "include_exhibits": True, **params}
    body = c.fetch("filing_items", query)
    return exhibits_frame([(query, body)])


def bind_client_methods() -> None:
    """Attach every dataset function (and :func:`available`, :func:`financials`) to :class:`Client`."""

    def method(fn: Callable[..., Any]) -> Callable[..., Any]:
        def bound(self: Client, *args: Any, **kwargs: Any) -> Any:
            return fn(*args, client=self, **kwargs)

        bound.__name__ = bound.__qualname__ = fn.__name__
        bound.__doc__ = fn.__doc__
        return bound

    for name, fn in {**DATASETS, "available": available, "financials": financials,
                     "filing_exhibits": filing_exhibits}.items():  # fmt: skip
        setattr(Client, name, method(fn))


def _check_names(mapping: Mapping[str, Any]) -> None:
    unknown = set(mapping) - set(CATALOG)
    if unknown:  # pragma: no cover - guards the tables above
        raise RuntimeError(f"unknown endpoints in datasets tables: {unknown}")


_check_names(_DOC_EXAMPLES)
bind_client_methods()
