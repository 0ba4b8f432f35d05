"""Matplotlib plots of fdkit frames; each returns the Axes (used by ``df.fds.plot``).

Example:
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import fdkit
    >>> ax = price_lines(fdkit.prices(["AAPL", "MSFT"], start_date="2024-01-02", end_date="2024-03-28"), rebase=100)
    >>> [t.get_text() for t in ax.get_legend().get_texts()]
    ['AAPL', 'MSFT']
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

__all__ = [
    "words",
    "price_lines",
    "statement_lines",
    "segment_bars",
    "ratio_bars",
    "ic_bars",
    "quantile_lines",
    "event_lines",
    "FISCAL_PERIODS_ATTR",
    "fiscal_periods_text",
]

#: the ``DataFrame.attrs`` key where a screen counts the fiscal periods of its rows (``{"FY2016": 12}``)
FISCAL_PERIODS_ATTR = "fiscal_periods"
#: more bars than this are drawn horizontally, sorted, on a figure as tall as they need (labels never overlap)
_MANY_BARS = 12


def fiscal_periods_text(counts: Mapping[str, int]) -> str:
    """Fiscal periods and their row counts, most rows first, for a title or a warning.

    Args:
        counts: rows per fiscal period.

    Returns:
        ``"FY2016"`` for one period, ``"FY2016 x12, FY2025 x4"`` for several.

    Example:
        >>> fiscal_periods_text({"FY2025": 4, "FY2016": 12}), fiscal_periods_text({"FY2016": 3})
        ('FY2016 x12, FY2025 x4', 'FY2016')
    """
    if len(counts) == 1:
        return str(next(iter(counts)))
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    shown = ", ".join(f"{k} x{v}" for k, v in ordered[:4])
    return shown + (f" and {len(ordered) - 4} more" if len(ordered) > 4 else "")


def _axes(ax: Any) -> Any:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=(9, 4.5))
    return ax


def _legend(ax: Any, entries: int) -> None:
    """The legend inside the axes for a few lines; beside them, in columns of 20, for more (never over the data)."""
    if entries <= _MANY_BARS:
        ax.legend(loc="best", fontsize="small")
    else:
        ax.legend(
            loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="x-small", ncol=-(-entries // 20), frameon=False
        )
        if ax.figure.get_layout_engine() is None:  # make room for it (a figure with its own layout keeps it)
            ax.figure.set_layout_engine("constrained")


def _wide(df: pd.DataFrame, column: str) -> pd.DataFrame:
    return df.fds.wide(column)


#: the words an axis says for a column (anything else: its name with spaces)
_WORDS = {
    "close": "close price",
    "adj_close": "adjusted close (dividends and splits)",
    "tr_close": "total return",
    "open": "open price",
    "high": "high price",
    "low": "low price",
    "volume": "shares traded",
}


def words(column: str) -> str:
    """What an axis label says for a column: words, not a column name.

    Example:
        >>> words("tr_close"), words("net_margin")
        ('total return', 'net margin')
    """
    return _WORDS.get(column, column.replace("_", " "))


def price_lines(
    df: pd.DataFrame,
    column: str = "close",
    *,
    rebase: float | None = None,
    ax: Any = None,
    title: str | None = None,
    order: Sequence[str] | None = None,
) -> Any:
    """One line per ticker of a price column; ``rebase=100`` draws performance from a common start.

    The y axis says the column in words (``total return, rebased to 100 on the first day``); a rebased plot has a
    line at the base. The legend lists the tickers in ``order`` (a title naming them should use the same order).

    Args:
        df: a long price frame ``(ticker, time)``.
        column: the column to draw.
        rebase: rebase each ticker to this value at its first point.
        ax: an existing Axes.
        title: the title.
        order: the tickers' order in the legend (default: the frame's); tickers not in it follow.

    Returns:
        The Axes.

    Example:
        >>> import matplotlib; matplotlib.use("Agg")
        >>> days = pd.date_range("2024-01-02", periods=3)
        >>> px = pd.DataFrame({"close": [1.0, 2.0, 3.0, 2.0, 2.0, 1.0]},
        ...     index=pd.MultiIndex.from_product([["A", "B"], days], names=["ticker", "time"]))
        >>> ax = price_lines(px, rebase=100, order=["B", "A"])
        >>> [t.get_text() for t in ax.get_legend().get_texts()], ax.get_ylabel()
        (['B', 'A'], 'close price, rebased to 100 on the first day')
    """
    ax = _axes(ax)
    wide = _wide(df, column)
    if order is not None:
        first = [t for t in dict.fromkeys(order) if t in wide.columns]
        wide = wide[first + [t for t in wide.columns if t not in first]]
    if rebase is not None:
        wide = wide / wide.bfill().iloc[0] * rebase
        ax.axhline(rebase, color="grey", lw=0.8, ls="--", zorder=1)
    for ticker in wide.columns:
        ax.plot(wide.index, wide[ticker], label=ticker, linewidth=1.2)
    ax.set_ylabel(f"{words(column)}, rebased to {rebase:g} on the first day" if rebase is not None else words(column))
    ax.set_xlabel("date")
    ax.set_title(title or ("Performance" if rebase is not None else f"{words(column).capitalize()} by ticker"))
    _legend(ax, len(wide.columns))
    ax.grid(alpha=0.3)
    return ax


def _unit(df: pd.DataFrame | pd.Series, scale: float) -> str:
    """An amount axis's unit: the frame's one currency and the scale (``" (USD billions)"``).

    Example:
        >>> _unit(pd.DataFrame({"currency": ["USD", "USD"]}), 1e9), _unit(pd.DataFrame(), 1e6)
        (' (USD billions)', ' (millions)')
    """
    currencies: list[str] = sorted(map(str, df["currency"].dropna().unique())) if "currency" in df.columns else []
    currency = f"{currencies[0]} " if len(currencies) == 1 else ""
    scaled = {1e9: "billions", 1e6: "millions", 1.0: ""}.get(scale, f"/{scale:g}")
    return f" ({currency}{scaled})".replace(" )", ")") if currency or scaled else ""


def _share_axis(ax: Any, columns: Sequence[str], axis: str = "y") -> None:
    """Margins, growth rates and returns read as percentages (``0.25`` is ``25%``), where every column is one."""
    from matplotlib.ticker import PercentFormatter

    def share(c: str) -> bool:
        return c.endswith(("margin", "growth", "_yield")) or c.startswith("return_on")

    if columns and all(share(c) for c in columns):
        (ax.yaxis if axis == "y" else ax.xaxis).set_major_formatter(PercentFormatter(1.0))


def statement_lines(
    df: pd.DataFrame, column: str, *, ax: Any = None, scale: float = 1e9, title: str | None = None
) -> Any:
    """A statement line item over report periods, one line per ticker.

    Args:
        df: a statement frame ``(ticker, report_period)``.
        column: the line item (e.g. ``revenue``).
        ax: an existing Axes.
        scale: divide values by this (default billions).
        title: the title.

    Returns:
        The Axes.
    """
    ax = _axes(ax)
    wide = _wide(df, column) / scale
    for ticker in wide.columns:
        s = wide[ticker].dropna()
        ax.plot(s.index, s.values, marker="o", markersize=3, label=ticker)
    ax.set_ylabel(f"{words(column)}{_unit(df, scale)}")
    ax.set_xlabel("fiscal period end")
    ax.set_title(title or f"{column.replace('_', ' ').title()} over time")
    _legend(ax, len(wide.columns))
    ax.grid(alpha=0.3)
    return ax


def segment_bars(
    df: pd.DataFrame,
    *,
    segment_type: str | None = None,
    ticker: str | None = None,
    ax: Any = None,
    scale: float = 1e9,
    exclude: tuple[str, ...] = (),
    title: str | None = None,
) -> Any:
    """Stacked bars of segment amounts per report period (one ticker, one segment type).

    Args:
        df: an exploded segments frame (``fdkit.segmented_revenues``).
        segment_type: ``product``, ``segment`` or ``geography`` (default: the frame's only type, else
            ``product`` where the frame has it, else its first).
        ticker: the ticker (default: the first one).
        ax: an existing Axes.
        scale: divide amounts by this (default billions).
        exclude: labels to leave out. Subtotals (``is_subtotal``: Apple's Product, NVIDIA's Data Center) are
            always left out, so the bars stack leaves only and add up to the revenue they break down.
        title: the title.

    Returns:
        The Axes.
    """
    ax = _axes(ax)
    tickers = df.index.get_level_values("ticker").unique()
    ticker = ticker or str(tickers[0])
    sub = df.xs(ticker, level="ticker")
    if segment_type is None:
        types = sorted(str(t) for t in sub["segment_type"].dropna().unique())
        segment_type = types[0] if len(types) == 1 else ("product" if "product" in types else (types or [""])[0])
    sub = sub[(sub["segment_type"] == segment_type) & ~sub["segment_label"].isin(list(exclude))]
    if "is_subtotal" in sub.columns:
        sub = sub[~sub["is_subtotal"].fillna(False).astype(bool)]
    table = (
        sub.reset_index().pivot_table(
            index="report_period", columns="segment_label", values="amount", aggfunc="sum", observed=True
        )
        / scale
    )
    days = pd.Series(table.index).diff().dt.days.dropna()
    width = 0.7 * float(days.median()) if len(days) else 250.0  # bars at their dates: a gap of years shows as one
    bottom = pd.Series(0.0, index=table.index)
    for col in table.columns:
        vals = table[col].fillna(0.0)
        ax.bar(table.index, vals.values, width=width, bottom=bottom.values, label=str(col))
        bottom += vals
    ax.set_xticks(table.index, [f"{d:%Y-%m}" for d in table.index])  # each bar its period; a gap stays a gap
    if len(table) > 6:
        ax.tick_params(axis="x", rotation=45)
    ax.set_ylabel(f"revenue{_unit(sub, scale)}")
    ax.set_xlabel("fiscal period end")
    ax.set_title(title or f"{ticker} revenue by {segment_type}")
    handles, names = ax.get_legend_handles_labels()  # top of the stack first, as the bars read
    ax.legend(handles[::-1], names[::-1], loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    if ax.figure.get_layout_engine() is None:
        ax.figure.set_layout_engine("constrained")
    return ax


def ratio_bars(df: pd.DataFrame, columns: list[str] | None = None, *, ax: Any = None, title: str | None = None) -> Any:
    """Bars comparing tickers on ratios (the latest row of each ticker), readable at any number of tickers.

    Up to a dozen tickers: vertical bars; more: horizontal bars sorted by the first ratio on a figure as tall as
    they need, so labels never overlap. The title names the fiscal period compared (from a screen's
    ``attrs["fiscal_periods"]`` or the rows' ``fiscal_period``), or the mix of periods when the latest rows differ.

    Args:
        df: a ratio frame indexed ``(ticker, report_period)``.
        columns: ratios to show (default: up to four numeric columns).
        ax: an existing Axes.
        title: the title.

    Returns:
        The Axes.

    Example:
        >>> import matplotlib; matplotlib.use("Agg")
        >>> rows = pd.DataFrame({"net_margin": [0.2, 0.3], "fiscal_period": ["FY2016", "FY2016"]},
        ...     index=pd.MultiIndex.from_tuples([("A", pd.Timestamp("2016-12-31")), ("B", pd.Timestamp("2016-09-30"))],
        ...                                     names=["ticker", "report_period"]))
        >>> ratio_bars(rows, ["net_margin"]).get_title()
        'net_margin, FY2016'
    """
    latest = df.sort_index().groupby(level="ticker", observed=True).tail(1).droplevel(-1)
    numeric = [c for c in latest.columns if pd.api.types.is_float_dtype(latest[c])]
    columns = columns or numeric[:4]
    periods = df.attrs.get(FISCAL_PERIODS_ATTR)
    if not periods and "fiscal_period" in latest.columns:
        periods = latest["fiscal_period"].astype("string").value_counts(dropna=True).to_dict()
    what = ", ".join(columns) if len(columns) <= 2 else "Ratios"
    if periods:
        when = fiscal_periods_text(periods)
        when = f"latest of each ticker: {when}" if len(periods) > 1 else when
    else:
        when = "latest period"
    many = len(latest) > _MANY_BARS
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(9, max(4.5, 0.3 * len(latest) * (len(columns) if many else 0) + 1.5)))
    value = words(columns[0]) if len(columns) == 1 else "ratio"
    if many:
        table = latest[columns].sort_values(columns[0], na_position="first")
        table.plot.barh(ax=ax, width=0.8)
        ax.tick_params(axis="y", labelsize="small")
        ax.grid(alpha=0.3, axis="x")
        ax.set_xlabel(value)
        ax.set_ylabel(f"company (ticker), by {value}, highest at the top")
        _share_axis(ax, columns, "x")
    else:
        latest[columns].plot.bar(ax=ax, rot=45 if len(latest) > 6 else 0)
        ax.grid(alpha=0.3, axis="y")
        ax.set_ylabel(value)
        ax.set_xlabel("company (ticker)")
        _share_axis(ax, columns, "y")
    ax.set_title(title or f"{what}, {when}")
    if len(columns) == 1 and ax.get_legend() is not None:
        ax.get_legend().remove()
    return ax


def ic_bars(df: pd.DataFrame, *, ax: Any = None, title: str | None = None, window: int = 12) -> Any:
    """Per-date information coefficients as bars with their rolling mean (the output of ``rank_ic``).

    Args:
        df: a frame indexed by date, one IC column per horizon (the first is drawn).
        ax: an existing Axes.
        title: the title.
        window: dates in the rolling mean.

    Returns:
        The Axes.
    """
    ax = _axes(ax)
    col = df.columns[0]
    ic = df[col]
    bars = ax.bar(ic.index, ic.to_numpy(), width=20, alpha=0.5, label=f"rank IC of each date ({_horizon(str(col))})")
    rolling = ic.rolling(window, min_periods=window).mean()  # a mean of fewer dates would start with a spike
    drawn = [bars]
    if rolling.notna().any():  # (fewer dates than the window: no mean to draw, none in the legend)
        drawn += ax.plot(ic.index, rolling.to_numpy(), color="black", label=f"mean of the last {window} dates")
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_ylabel("rank IC (above 0: high values, higher returns)")
    ax.set_xlabel("date")
    ax.set_title(title or f"Rank IC, mean {ic.mean():.3f}")
    ax.legend(handles=drawn, loc="best", fontsize="small")  # the bars first, as drawn; where they cover least
    return ax


def _horizon(column: str) -> str:
    """A forward-return column in words: ``fwd_1`` is the next period's return.

    Example:
        >>> _horizon("fwd_1"), _horizon("fwd_3"), _horizon("ret")
        ("the next period's return", 'the return over the next 3 periods', 'ret')
    """
    found = re.fullmatch(r"(?:ic_)?fwd_(\d+)", column)
    if not found:
        return column
    n = int(found.group(1))
    return "the next period's return" if n == 1 else f"the return over the next {n} periods"


def quantile_lines(
    df: pd.DataFrame, *, ax: Any = None, title: str | None = None, log: bool = False, factor: str | None = None
) -> Any:
    """Growth of 1 per factor quantile and the long-short spread (the output of ``quantile_returns``).

    The legend says which end is which: ``q1`` holds the lowest factor values, the last quantile the highest
    (``attrs["factor"]`` names the factor), and the spread is the top minus the bottom. The y axis is the growth
    of 1; ``log=True`` draws it on a log scale with plain ticks (0.5, 1, 2, 5), never ``6×10⁰``.

    Args:
        df: a frame indexed by date with quantile columns and ``long_short`` (per-date returns, compounded here,
            or already cumulative: ``attrs["cumulative"]``).
        ax: an existing Axes.
        title: the title.
        log: a log-scale y axis.
        factor: the factor in words for the legend (default: ``attrs["factor"]`` with spaces for underscores).

    Returns:
        The Axes.

    Example:
        >>> import matplotlib; matplotlib.use("Agg")
        >>> q = pd.DataFrame({"q1": [0.01, -0.02], "q2": [0.0, 0.01], "q3": [0.02, 0.0]},
        ...                  index=pd.to_datetime(["2016-01-31", "2016-02-29"]).rename("time"))
        >>> q["long_short"] = q["q3"] - q["q1"]
        >>> q.attrs["factor"] = "earnings_yield"
        >>> ax = quantile_lines(q)
        >>> [t.get_text() for t in ax.get_legend().get_texts()]
        ['q1: lowest earnings yield', 'q2', 'q3: highest earnings yield', 'long-short: q3 minus q1']
    """
    ax = _axes(ax)
    cumulative = df if df.attrs.get("cumulative") else (1 + df.fillna(0)).cumprod()
    quantiles = [str(c) for c in df.columns if re.fullmatch(r"q\d+", str(c))]
    top = max(quantiles, key=lambda c: int(c[1:]), default=None)
    factor = factor or words(str(df.attrs.get("factor", "factor")))
    ends = {"q1": f"q1: lowest {factor}", **({top: f"{top}: highest {factor}"} if top and top != "q1" else {})}
    for col in cumulative.columns:
        style = {"color": "black", "lw": 2} if col == "long_short" else {}
        label = f"long-short: {top or 'top'} minus q1" if col == "long_short" else ends.get(str(col), str(col))
        ax.plot(cumulative.index, cumulative[col].to_numpy(), label=label, **style)
    ax.axhline(1.0, color="grey", lw=0.8, ls="--", zorder=1)
    if log:
        from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 3.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_ylabel("growth of 1" + (" (log scale)" if log else ""))
    ax.set_xlabel(str(df.index.name or "date").replace("time", "date"))
    ax.set_title(title or "Factor quantiles: growth of 1")
    if len(cumulative.columns) <= 4:  # one column, read top-down in the lines' order
        ax.legend(loc="upper left", fontsize="small")
    else:  # beside the axes, never over the lines
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
        if ax.figure.get_layout_engine() is None:
            ax.figure.set_layout_engine("constrained")
    ax.grid(alpha=0.3)
    return ax


def event_lines(df: pd.DataFrame, *, ax: Any = None, title: str | None = None) -> Any:
    """Mean abnormal return bars and the cumulative abnormal return around events (the output of ``event_study``).

    Args:
        df: a frame indexed by event day with ``mean_ar`` and ``car``.
        ax: an existing Axes.
        title: the title.

    Returns:
        The Axes.
    """
    from matplotlib.ticker import PercentFormatter

    ax = _axes(ax)
    ax.bar(df.index, df["mean_ar"].to_numpy(), alpha=0.4, label="mean abnormal return that day")
    ax.plot(df.index, df["car"].to_numpy(), color="black", label="cumulative abnormal return")
    ax.axvline(0, color="grey", lw=0.8)
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xlabel("trading days from the event (0: the event day)")
    ax.set_ylabel("abnormal return")
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    used = df.attrs.get("events_used")
    count = f" ({used:,} events)" if used is not None else ""
    if title is None:
        title = f"Event study{count}"
    elif used is not None and f"{used:,} events" not in title:  # a title of the caller's still says how many events
        title += count
    ax.set_title(title)
    ax.legend(loc="best", fontsize="small")  # where it covers the fewest points
    return ax
