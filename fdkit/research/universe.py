"""Point-in-time universes: which rows of a ``(ticker, date)`` panel belong to an index on their date.

A cross-section built from today's index list is survivorship-biased: it holds the companies that did well enough
to be in the index now, and none that were acquired, went bankrupt or were dropped. :func:`member_mask` keeps a
panel's row only where its ticker was a member on the row's own date, from membership spells (``ticker``,
``start_date``, ``end_date``: the frame ``fdkit.index_members(index)`` returns, whose ``ticker`` is the symbol the
company trades under today, so a renamed company's history is matched under its new symbol).

Example:
    >>> import pandas as pd
    >>> spells = pd.DataFrame({"ticker": ["A", "B"], "start_date": pd.to_datetime(["2020-01-01", "2020-01-03"]),
    ...                        "end_date": pd.to_datetime(["2020-01-02", None])})
    >>> days = pd.to_datetime(["2020-01-01", "2020-01-02", "2020-01-03"])
    >>> idx = pd.MultiIndex.from_product([["A", "B"], days], names=["ticker", "time"])
    >>> member_mask(idx, spells).tolist()
    [True, True, False, False, False, True]
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from fdkit.errors import BadRequestError

__all__ = ["member_mask"]


def member_mask(index: pd.Index, spells: pd.DataFrame) -> np.ndarray:
    """Whether each ``(ticker, date)`` of a panel's index was in the index on that date.

    Args:
        index: a panel's ``(ticker, date)`` index (the date level: any name; tz-aware dates compare in UTC).
        spells: membership spells with ``ticker``, ``start_date`` and ``end_date`` (missing: still a member), as
            columns or index levels.

    Returns:
        A boolean array aligned with ``index``.

    Raises:
        BadRequestError: the index is no ``(ticker, date)`` index, or the spells lack a column.
    """
    names = [n for n in index.names if n is not None]
    if "ticker" not in names or len(names) != 2:
        raise BadRequestError("a panel is indexed (ticker, date): e.g. fdkit.prices(...) or a frame joined to it")
    spells = spells.reset_index() if "ticker" not in spells.columns else spells
    missing = {"ticker", "start_date", "end_date"} - set(spells.columns)
    if missing:
        raise BadRequestError(f"membership spells need {', '.join(sorted(missing))}: see fdkit.index_members")
    when = pd.DatetimeIndex(index.get_level_values(str(next(n for n in names if n != "ticker"))))
    when = when.tz_convert(None) if when.tz is not None else when
    rows = pd.DataFrame(
        {
            "ticker": index.get_level_values("ticker").astype(str),
            "t": when.as_unit("ns").to_numpy(),
            "row": np.arange(len(index)),
        }
    )
    start = pd.to_datetime(spells["start_date"]).astype("datetime64[ns]")
    end = pd.to_datetime(spells["end_date"]).astype("datetime64[ns]").fillna(pd.Timestamp("2262-01-01"))  # running
    s = pd.DataFrame({"ticker": spells["ticker"].astype(str), "start": start, "end": end})
    pairs = rows.merge(s, on="ticker", how="inner")
    inside = pairs[(pairs["start"] <= pairs["t"]) & (pairs["t"] <= pairs["end"])]
    mask = np.zeros(len(index), dtype=bool)
    mask[inside["row"].to_numpy()] = True
    return mask
