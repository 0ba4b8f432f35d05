"""The hand-written dataset functions (listings, the joined statements, exhibits), handed their client.

Below :class:`~fdkit.client.session.Client` (whose methods call these with ``self``) and below :mod:`fdkit.datasets`
(whose module functions call these with the default client), like :mod:`fdkit.client.dispatch`.

Example:
    >>> import fdkit
    >>> available(fdkit.Client(), "interest_rates", "banks")
    ['ECB', 'FED']
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

import pandas as pd

from fdkit.catalog import endpoints as _catalog
from fdkit.client.bulk import uses_bulk
from fdkit.client.dispatch import MISSING_ATTR, Errors, call
from fdkit.errors import SkippedWarning, TruncatedWarning, warn_user
from fdkit.frames.typed import exhibits_frame

if TYPE_CHECKING:
    from fdkit.client.session import Client

__all__ = ["available", "financials", "filing_exhibits"]


def available(client: Client, resource: str, what: str = "tickers", **params: Any) -> Any:
    """Call a listing endpoint: what a dataset has (tickers, ciks, banks, investors, names, ...).

    Args:
        client: the client that fetches.
        resource: a dataset name such as ``"prices"`` or ``"interest_rates"``, or a listing's own name.
        what: ``tickers`` (default), ``ciks``, ``banks``, ``investors``, ``periods``, ``names`` or
            ``transaction_types``.
        **params: listing parameters (``ticker`` for insider names).

    Returns:
        The names, sorted as the service gives them (the 13F filers as ``{cik, name}`` records); for the vocabulary
        documents (``filing_items_types``, ``screener_filters``) the service's whole answer, a dict.

    Example:
        >>> import fdkit
        >>> available(fdkit.Client(), "interest_rates", "banks")
        ['ECB', 'FED']
    """
    ep = _catalog.listing_for(resource, what)
    body = client.fetch(ep, params)
    if not ep.response_key:  # a document: the answer is the body
        return dict(body)
    return list(body.get(ep.response_key) or [])


def financials(
    client: Client,
    ticker: str | Sequence[str],
    period: str = "annual",
    limit: int | Literal["default"] | None = "default",
    *,
    errors: Errors = "raise",
    progress: bool | None = None,
    **filters: Any,
) -> pd.DataFrame:
    """Income statement, balance sheet and cash flow joined per ``(ticker, report_period)``.

    A field reported in two statements (``net_income``) keeps the income statement's value; filing metadata comes
    from the income statement. One ticker, or a service that is not fdkit's own: one ``/financials`` request per
    ticker (the three statements of each report in one answer), the tickers fetched concurrently. A ticker list
    from an fdkit peer: the three statement endpoints, each in a few bulk requests
    (:mod:`fdkit.client.bulk`), joined: the same frame (tested), three requests per 500 tickers instead of one per
    ticker.

    Args:
        client: the client that fetches.
        ticker: one ticker or a list.
        period: ``annual``, ``quarterly`` or ``ttm``.
        limit: periods per ticker: the service's default of 4 (with one ``TruncatedWarning`` when more exist),
            ``None`` for every period, or a number.
        errors: for a list of tickers: ``raise``, ``warn`` or ``ignore`` failures.
        progress: progress bars (default: on a terminal or in Jupyter, for calls over half a second).
        **filters: ``report_period_gte`` and the other report-period filters, ``as_of``.

    Returns:
        One wide statement frame, sorted by ``(ticker, report_period)``.

    Example:
        >>> import fdkit
        >>> df = financials(fdkit.Client(), "AAPL", period="annual", limit=2)
        >>> {"revenue", "total_assets", "free_cash_flow"} <= set(df.columns)
        True
    """
    ep = _catalog.get("financial_statements")
    as_of = filters.pop("as_of", None)
    known = {k: v for k, v in filters.items() if k in ep.param_names}
    unknown = {k: v for k, v in filters.items() if k not in ep.param_names}
    params = {"ticker": ticker, "period": period, "limit": limit, **known}
    many = not isinstance(ticker, str) and len(set(map(str, ticker))) > 1
    # one call: its probe of the service and the statements' first requests share its deadline
    with client.call_scope(), warnings.catch_warnings(record=True) as caught:  # say financials(), not the endpoint's
        warnings.simplefilter("always", TruncatedWarning)
        if many and not unknown and uses_bulk(client, _catalog.get("income_statements"), 2):
            out = _joined_statements(client, params, as_of=as_of, errors=errors, progress=progress)
        else:
            out = call(client, ep.name, params, as_of=as_of, errors=errors, progress=progress, unknown=unknown)
    said: set[str] = set()
    for w in caught:
        if issubclass(w.category, TruncatedWarning):
            message = re.sub(r"^\w+\(\)", "financials()", str(w.message), count=1)
            if not said:  # one warning (the three statements' say the same of the income statement's periods)
                said.add(message)
                warn_user(message, TruncatedWarning)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)  # already at the user's line
    return out.sort_index()


def _joined_statements(
    client: Client, params: dict[str, Any], *, as_of: Any, errors: Errors, progress: bool | None
) -> pd.DataFrame:
    """The three statements of the tickers (bulk requests each), joined as one ``/financials`` answer is."""
    names = ("income_statements", "balance_sheets", "cash_flow_statements")
    quiet: Errors = "ignore" if errors == "warn" else errors  # a failed ticker is said once, not once a statement
    parts = [call(client, name, params, as_of=as_of, errors=quiet, progress=progress) for name in names]
    joined = parts[0]
    for other in parts[1:]:
        joined = joined.join(other[[c for c in other.columns if c not in joined.columns]], how="outer")
    joined.attrs = dict(parts[0].attrs)
    income = _catalog.get(names[0]).path
    missing = {
        t: why.replace(f", {income})", ", /financials)") for t, why in parts[0].attrs.get(MISSING_ATTR, {}).items()
    }
    joined.attrs[MISSING_ATTR] = missing  # (named as one /financials request per ticker names them)
    if errors == "warn":
        for who, why in missing.items():
            warn_user(
                f"financials: {who} skipped (errors='warn'; named in df.attrs['missing']; errors='ignore' "
                f"skips quietly): {why}",
                SkippedWarning,
            )
    return joined


def filing_exhibits(client: Client, ticker: str, filing_type: str, year: int, **params: Any) -> pd.DataFrame:
    """Exhibits of a filing (with their text), one row per exhibit.

    Args:
        client: the client that fetches.
        ticker: ticker.
        filing_type: ``10-K``, ``10-Q`` or ``8-K``.
        year: filing year.
        **params: ``quarter``, ``item``, ``accession_number``.

    Returns:
        A frame indexed ``(ticker, filing_date)`` with ``accession_number``, ``item``, ``number``, ``description``,
        ``url``, ``text``.

    Example:
        >>> import fdkit
        >>> ex = filing_exhibits(fdkit.Client(), "NVDA", "8-K", 2026)
        >>> list(ex.columns)[:2]
        ['accession_number', 'item']
    """
    query = {"ticker": ticker, "filing_type": filing_type, "year": year, "include_exhibits": True, **params}
    body = client.fetch("filing_items", query)
    return exhibits_frame([(query, body)])
