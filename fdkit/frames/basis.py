"""Share bases: which splits a frame's prices, per-share values and share counts are adjusted for.

A frame says its basis in ``df.attrs["split_basis"]``:

* ``"adjusted"``: adjusted for every split the service lists (``fdkit.splits``). Frames fdkit returns for prices,
  statements, metrics, earnings, screens and 13F positions carry it: their per-share values and prices are on one
  basis, so ratios of the two are right.
* ``"raw"``: as traded (a price on day d is on day d's basis) or as reported (a statement value is on its filing
  day's basis).
* an ISO date ``"YYYY-MM-DD"``: adjusted for the splits up to that day (a vendor file downloaded on that day).

A frame without the attribute is taken to be on the basis of whatever it is combined with. :func:`rebase` moves a
frame between bases with a split table (``ticker``, ``date`` = ex-date, ``ratio`` = new shares per old share);
``.fds.ratios(prices=...)`` calls it when the price panel's basis differs from the statements'.

Example:
    >>> import pandas as pd
    >>> splits = pd.DataFrame({"ticker": ["X"], "date": pd.to_datetime(["2024-06-10"]), "ratio": [10.0]})
    >>> days = pd.to_datetime(["2024-06-07", "2024-06-10"])
    >>> idx = pd.MultiIndex.from_product([["X"], days], names=["ticker", "time"])
    >>> raw = pd.DataFrame({"close": [1200.0, 121.0], "volume": [1.0, 10.0]}, index=idx)
    >>> raw.attrs["split_basis"] = "raw"
    >>> adj = rebase(raw, "adjusted", splits)
    >>> adj["close"].tolist(), adj["volume"].tolist(), adj.attrs["split_basis"]
    ([120.0, 121.0], [10.0, 10.0], 'adjusted')
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from fdkit.errors import BadRequestError

__all__ = [
    "SPLIT_RATIOS",
    "split_like",
    "ADJUSTED",
    "ATTR",
    "RAW",
    "PER_SHARE",
    "SHARE_COUNTS",
    "PRICES",
    "as_traded",
    "basis_of",
    "rebase",
    "split_factor",
]

#: the ratios (new shares per old) of the forward splits US companies make; their inverses are reverse splits
SPLIT_RATIOS = (2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 1.5, 1.25, 4 / 3, 2.5)


def split_like(factor: float, tolerance: float = 0.01) -> bool:
    """Whether a price factor (a close over the close before) is a split's: within ``tolerance`` of a ratio.

    A ratio of :data:`SPLIT_RATIOS` or its inverse (a reverse split).

    Args:
        factor: the close over the close before it.
        tolerance: the largest relative distance.

    Returns:
        ``True`` where a split of :data:`SPLIT_RATIOS` would move the close so.

    Example:
        >>> split_like(0.501), split_like(2.98), split_like(0.705), split_like(1.523)
        (True, True, False, False)
    """
    return factor > 0 and any(abs(factor * r - 1) < tolerance or abs(factor / r - 1) < tolerance for r in SPLIT_RATIOS)


ATTR = "split_basis"
ADJUSTED = "adjusted"
RAW = "raw"
#: columns divided by a split's ratio (per-share values and prices)
PER_SHARE = (
    "earnings_per_share",
    "earnings_per_share_diluted",
    "dividends_per_common_share",
    "book_value_per_share",
    "free_cash_flow_per_share",
    "estimated_earnings_per_share",
    "dividend",
)
PRICES = ("open", "high", "low", "close", "price", "transaction_price_per_share")
#: columns multiplied by a split's ratio (share counts)
SHARE_COUNTS = (
    "volume",
    "weighted_average_shares",
    "weighted_average_shares_diluted",
    "outstanding_shares",
    "shares",
    "transaction_shares",
)


def basis_of(df: pd.DataFrame) -> str | None:
    """The basis a frame says it is on (``None``: it does not say).

    Args:
        df: any frame.

    Returns:
        ``"adjusted"``, ``"raw"``, an ISO date, or ``None``.

    Raises:
        BadRequestError: for an attribute that is none of those.

    Example:
        >>> basis_of(pd.DataFrame()) is None
        True
    """
    value = df.attrs.get(ATTR)
    if value is None:
        return None
    return _check(value)


def _check(basis: object) -> str:
    text = str(basis)
    if text in (ADJUSTED, RAW):
        return text
    try:
        return pd.Timestamp(text).strftime("%Y-%m-%d")
    except ValueError:
        raise BadRequestError(
            f"unknown split basis {basis!r}: use 'adjusted', 'raw' or a date (YYYY-MM-DD)", error="Invalid basis"
        ) from None


def _rows(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Each row's ticker and its own day (bar time; a statement's filing date, else its period end)."""
    flat = df.reset_index()
    if "ticker" not in flat.columns:
        raise BadRequestError("the frame has no ticker column or index level to match splits with")
    for col in ("time", "date", "filing_date", "report_period"):
        if col in flat.columns:
            day = pd.to_datetime(flat[col])
            if isinstance(day.dtype, pd.DatetimeTZDtype):
                day = day.dt.tz_convert(None)
            return flat["ticker"].astype(str).to_numpy(), day.astype("datetime64[ns]").to_numpy()
    raise BadRequestError("the frame has no date column (time, date, filing_date or report_period) to match splits")


def split_factor(tickers: np.ndarray, days: np.ndarray, basis: str, splits: pd.DataFrame) -> np.ndarray:
    """Product of the ratios of the splits a value on ``day`` is adjusted for, on ``basis``.

    Args:
        tickers: each row's ticker.
        days: each row's own day.
        basis: ``adjusted``, ``raw`` or an ISO date.
        splits: ``ticker``, ``date`` (ex-date), ``ratio``.

    Returns:
        One factor per row (1.0 where no split applies).

    Example:
        >>> s = pd.DataFrame({"ticker": ["X", "X"], "date": pd.to_datetime(["2020-01-02", "2022-01-03"]),
        ...                   "ratio": [2.0, 3.0]})
        >>> split_factor(np.array(["X", "X"]), pd.to_datetime(["2019-06-03", "2021-01-04"]).to_numpy(), "adjusted", s)
        array([6., 3.])
    """
    basis = _check(basis)
    out = np.ones(len(tickers))
    if basis == RAW:
        return out
    limit = np.datetime64("2262-01-01") if basis == ADJUSTED else np.datetime64(basis)
    sp = splits.assign(ticker=splits["ticker"].astype(str), date=pd.to_datetime(splits["date"]))
    for ticker, g in sp.groupby("ticker", sort=False):
        mask = tickers == ticker
        if not mask.any():
            continue
        for ex, ratio in zip(g["date"].to_numpy(), g["ratio"].to_numpy(dtype=float), strict=True):
            out[mask & (days < ex) & (ex <= limit)] *= ratio
    return out


def rebase(df: pd.DataFrame, to: str, splits: pd.DataFrame, *, source: str | None = None) -> pd.DataFrame:
    """Move a frame's prices, per-share values and share counts to another split basis.

    Args:
        df: a frame with a ``ticker`` and a date (``time``, ``date``, ``filing_date`` or ``report_period``), as
            columns or index levels.
        to: the basis wanted (``adjusted``, ``raw`` or an ISO date).
        splits: the split table (``fdkit.splits(...)`` or any frame with ``ticker``, ``date``, ``ratio``).
        source: the frame's basis (default: its ``split_basis`` attribute).

    Returns:
        A copy on the new basis, with ``attrs["split_basis"]`` set.

    Raises:
        BadRequestError: when the frame's basis is unknown or a basis is malformed.
    """
    source = _check(source) if source is not None else basis_of(df)
    if source is None:
        raise BadRequestError("the frame does not say its split basis: pass source= ('adjusted', 'raw' or a date)")
    to = _check(to)
    out = df.copy()
    out.attrs = {**df.attrs, ATTR: to}
    if source == to:
        return out
    split_table = splits.reset_index() if "ticker" not in splits.columns else splits
    tickers, days = _rows(df)
    k = split_factor(tickers, days, to, split_table) / split_factor(tickers, days, source, split_table)
    for col in out.columns:
        if col in PER_SHARE or col in PRICES:
            out[col] = out[col] / k
        elif col in SHARE_COUNTS:
            scaled = out[col] * k
            out[col] = scaled.round().astype("Int64") if str(df[col].dtype) == "Int64" else scaled
    return out


def as_traded(basis: pd.Series) -> pd.Series:
    """Whether each bar has an as-traded price: ``basis`` ``as_traded``, or none given.

    A lake or service that does not say a bar's basis (an older fdkit's lake, a mirror of a service without the
    extension) means the documents' bars: prices as traded. ``adjusted_only`` bars have no price.

    Args:
        basis: the bars' ``basis`` column.

    Returns:
        A boolean series aligned to it.

    Example:
        >>> as_traded(pd.Series(["as_traded", "adjusted_only", None])).tolist()
        [True, False, True]
    """
    return (basis.isna() | (basis.astype("string") == "as_traded")).astype(bool)
