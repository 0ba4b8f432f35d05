"""The dataset functions of the package: the generated ones (:mod:`fdkit.api`) and the hand-written ones.

Each catalog entry (listings aside) becomes ``fdkit.<name>(...)`` and ``Client.<name>(...)``. Parameters keep the
service's names; the ticker (or bank) parameter also accepts a list, fetched concurrently with a bounded pool,
failures collected per ticker (``errors="raise"|"warn"|"ignore"``). ``raw=True`` returns the decoded JSON (a list
of bodies for a list of tickers). Listings are reached with :func:`available`. The hand-written functions here are
:mod:`fdkit.client.compound` with the default client.

Example:
    >>> import fdkit
    >>> df = fdkit.prices(["AAPL", "MSFT"], start_date="2024-01-02", end_date="2024-01-05")
    >>> df.index.names, len(df)
    (FrozenList(['ticker', 'time']), 8)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

import pandas as pd

from fdkit import api
from fdkit.client import compound
from fdkit.client.dispatch import Errors
from fdkit.client.session import Client, default_client

__all__ = ["DATASETS", "available", "financials", "filing_exhibits"]

#: the generated dataset functions, by name (see :mod:`fdkit.api`)
DATASETS: dict[str, Callable[..., Any]] = {name: getattr(api, name) for name in api.__all__}


def available(resource: str, what: str = "tickers", *, client: Client | None = None, **params: Any) -> Any:
    """Call a listing endpoint: what a dataset has (tickers, ciks, banks, investors, names, ...).

    Args:
        resource: a dataset name such as ``"prices"`` or ``"interest_rates"``, or a listing's own name.
        what: ``tickers`` (default), ``ciks``, ``banks``, ``investors``, ``periods``, ``names`` or
            ``transaction_types``.
        client: the client (default: the default client).
        **params: listing parameters (``ticker`` for insider names).

    Returns:
        The names, sorted as the service gives them (the 13F filers as ``{cik, name}`` records); for the vocabulary
        documents (``filing_items_types``, ``screener_filters``) the service's whole answer, a dict.

    Example:
        >>> import fdkit
        >>> fdkit.available("interest_rates", "banks")
        ['ECB', 'FED']
    """
    return compound.available(client or default_client(), resource, what, **params)


def financials(
    ticker: str | Sequence[str],
    period: str = "annual",
    limit: int | Literal["default"] | None = "default",
    *,
    client: Client | None = None,
    errors: Errors = "raise",
    progress: bool | None = None,
    **filters: Any,
) -> pd.DataFrame:
    """Income statement, balance sheet and cash flow joined per ``(ticker, report_period)``.

    A field reported in two statements (``net_income``) keeps the income statement's value; filing metadata comes
    from the income statement: the frame that joining ``income_statements``, ``balance_sheets`` and
    ``cash_flow_statements`` gives (tested). A ticker list from fdkit's own service (the embedded default, ``fdkit
    serve``) is three bulk requests per 500 tickers; from another service, one ``/financials`` request per ticker.

    Args:
        ticker: one ticker or a list.
        period: ``annual``, ``quarterly`` or ``ttm``.
        limit: periods per ticker: the service's default of 4 (with one ``TruncatedWarning`` when more exist),
            ``None`` for every period, or a number.
        client: the client (default: the default client).
        errors: for a list of tickers: ``raise``, ``warn`` or ``ignore`` failures.
        progress: progress bars (default: on a terminal or in Jupyter, for calls over half a second).
        **filters: ``report_period_gte`` and the other report-period filters, ``as_of``.

    Returns:
        One wide statement frame, sorted by ``(ticker, report_period)``.

    Example:
        >>> import fdkit
        >>> df = fdkit.financials("AAPL", period="annual", limit=2)
        >>> {"revenue", "total_assets", "free_cash_flow"} <= set(df.columns)
        True
    """
    return compound.financials(
        client or default_client(), ticker, period, limit, errors=errors, progress=progress, **filters
    )


def filing_exhibits(
    ticker: str, filing_type: str, year: int, *, client: Client | None = None, **params: Any
) -> pd.DataFrame:
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
    return compound.filing_exhibits(client or default_client(), ticker, filing_type, year, **params)
