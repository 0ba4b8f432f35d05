"""The median of a row's neighbours within its ticker: the yardstick of the statement sanity rules (pure pandas)."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["neighbour_median"]


def neighbour_median(rows: pd.DataFrame, field: str, reach: int = 4, least: int = 3) -> pd.Series:
    """Per row, the median of the same ticker's other positive values of ``field`` within ``reach`` rows each side.

    Rows are taken in ``report_period`` order per ``ticker``; fewer than ``least`` such values give NaN.

    Args:
        rows: ``ticker``, ``report_period`` and ``field``.
        field: the column.
        reach: rows each side.
        least: the fewest neighbours a median needs.

    Returns:
        The medians, aligned to ``rows``.

    Example:
        >>> df = pd.DataFrame({"ticker": ["X"] * 4, "report_period": pd.date_range("2016-03-31", periods=4,
        ...                    freq="QE"), "revenue": [10.0, 0.1, 11.0, 12.0]})
        >>> neighbour_median(df, "revenue").tolist()
        [11.0, 11.0, 10.0, 10.0]
    """
    out = pd.Series(np.nan, index=rows.index)
    for _, g in rows.sort_values("report_period").groupby(rows["ticker"].astype(str), sort=False):
        v = g[field].to_numpy(dtype=float)
        for k, idx in enumerate(g.index):
            around = np.r_[v[max(0, k - reach) : k], v[k + 1 : k + 1 + reach]]
            around = around[np.isfinite(around) & (around > 0)]
            if len(around) >= least:
                out[idx] = float(np.median(around))
    return out
