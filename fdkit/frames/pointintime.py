"""When each row became known, carried with the frame whatever columns a user selects.

A statement frame's point in time is its ``filing_date`` (and, where the service sends it, the SEC's acceptance
time ``filing_datetime``). A study usually selects a few columns before a point-in-time join
(``ttm[["margin"]].fds.asof(prices)``), which drops those columns; a join that then guessed a filing lag would use
statements before they were filed. So every frame fdkit builds with filing dates also keeps them in
``df.attrs[FILED_ATTR]``, keyed by the frame's own index: column selections, row filters, new columns, sorting and
``eval`` keep ``attrs``, so the filing times travel with the rows. Where neither the columns nor the attrs know a
row's filing time, :func:`filing_times` says so and the caller must choose a fallback explicitly.

Example:
    >>> import pandas as pd
    >>> idx = pd.MultiIndex.from_tuples([("AAPL", pd.Timestamp("2024-09-28"))], names=["ticker", "report_period"])
    >>> df = attach_filing_times(pd.DataFrame({"revenue": [1.0], "filing_date": [pd.Timestamp("2024-11-01")]},
    ...                                       index=idx))
    >>> filing_times(df[["revenue"]])["filing_date"].tolist()
    [Timestamp('2024-11-01 00:00:00')]
"""

from __future__ import annotations

from typing import Any

import pandas as pd

__all__ = ["FILED_ATTR", "FilingTimes", "attach_filing_times", "filing_times"]

#: the ``DataFrame.attrs`` key under which a frame carries its rows' filing times
FILED_ATTR = "fdkit.filing_times"
_COLUMNS = ("filing_date", "filing_datetime")


class FilingTimes(str):
    """The filing times of a frame's rows, keyed by its index (immutable once made).

    pandas copies ``attrs`` on every operation that keeps them (a deep copy in pandas 2 and later): this object
    copies as itself, so a large frame's filing times cost nothing to carry, and compares by content, so
    ``pd.concat`` of frames fetched separately keeps no stale times (it drops attrs that differ). It is a string
    to JSON (``to_parquet`` writes ``attrs`` as JSON): a saved frame keeps its ``filing_date`` column, not this.

    Args:
        times: ``filing_date`` (and ``filing_datetime`` where known) indexed like the frame (a unique index).
    """

    times: pd.DataFrame

    def __new__(cls, times: pd.DataFrame) -> FilingTimes:  # noqa: D102  (documented on the class)
        self = super().__new__(cls, f"filing times of {len(times)} rows")
        self.times = times
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FilingTimes:
        return self

    def __copy__(self) -> FilingTimes:
        return self

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, FilingTimes) and self.times.equals(other.times))

    __hash__ = str.__hash__  # equal times have equal row counts, so equal strings

    def __repr__(self) -> str:
        return f"FilingTimes({len(self.times)} rows)"

    def __reduce__(self) -> tuple[Any, ...]:
        return (FilingTimes, (self.times,))


def attach_filing_times(df: pd.DataFrame) -> pd.DataFrame:
    """Keep the frame's filing times in its ``attrs`` (in place; also returned), where it has them.

    Nothing is attached to a frame without a ``filing_date`` column or whose index does not name each row once
    (such a frame keeps its times in its columns or index only).

    Args:
        df: a frame as fdkit builds it.

    Returns:
        The same frame.

    Example:
        >>> import pandas as pd
        >>> df = pd.DataFrame({"filing_date": [pd.Timestamp("2024-01-02")]}, index=pd.Index(["A"], name="ticker"))
        >>> FILED_ATTR in attach_filing_times(df).attrs
        True
    """
    if "filing_date" in df.columns and not df.index.duplicated().any():  # (is_unique hashes a MultiIndex's tuples)
        cols = [c for c in _COLUMNS if c in df.columns]
        df.attrs[FILED_ATTR] = FilingTimes(df[cols].copy())
    return df


def filing_times(df: pd.DataFrame) -> pd.DataFrame | None:
    """The filing times of ``df``'s rows: from its columns, else from the times it carries, else ``None``.

    Args:
        df: any frame.

    Returns:
        A frame with ``filing_date`` (and ``filing_datetime`` where known), one row per row of ``df`` in its order
        (missing where a row's time is not known), or ``None`` when nothing is known about any row.

    Example:
        >>> import pandas as pd
        >>> filing_times(pd.DataFrame({"revenue": [1.0]})) is None
        True
    """
    if "filing_date" in df.columns:
        return df[[c for c in _COLUMNS if c in df.columns]].reset_index(drop=True)
    carried = df.attrs.get(FILED_ATTR)
    if not isinstance(carried, FilingTimes) or carried.times.index.names != df.index.names:
        return None
    return carried.times.reindex(df.index).reset_index(drop=True)
