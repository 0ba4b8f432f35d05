"""Total return from closes and the distributions they do not carry (pure pandas).

The lake's closes are on one split basis; distributions (cash dividends, specials, a spin-off's shares) are a
separate table. A price return from those closes loses every distribution: EBAY "fell" 57% on 2015-07-20, the day
its holders received PayPal. :func:`total_return_close` puts them back the way an adjusted close does.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
from pandas.tseries.offsets import BaseOffset

__all__ = [
    "BREAKS",
    "CHANGES",
    "FREQ_ATTR",
    "as_period",
    "period_returns",
    "price_column",
    "series_ids",
    "total_return_close",
]


def _long(prices: pd.DataFrame) -> pd.DataFrame:
    df = prices.reset_index() if {"ticker", "time"} - set(prices.columns) else prices.copy()
    return df.assign(_row=np.arange(len(df)), ticker=df["ticker"].astype(str))


def total_return_close(prices: pd.DataFrame, dividends: pd.DataFrame) -> pd.Series:
    """The closes adjusted for every distribution they do not carry: a total-return close, per ticker.

    The return over a day is ``(close + D) / previous close`` with ``D`` the distributions going ex that day (the
    holder's total return, the cash or the spun-off shares' value counted at the ex-date); where the frame has an
    ``adj_close`` on both days (the service's split- and dividend-adjusted close), its return is the day's instead,
    which also covers the days without an as-traded close (``basis`` adjusted_only). The chain is scaled so each
    ticker's last close (else its last adjusted close) is unchanged, as in an adjusted close. Distributions marked
    ``in_prices`` (the closes already carry them) are not applied again; one dated on a day without a bar applies on
    the next bar.

    Args:
        prices: daily bars with ``ticker``, ``time`` (columns or index levels), ``close`` and optionally
            ``adj_close``, on the split basis of ``dividends``.
        dividends: ``ticker``, ``date`` (the ex-date), ``dividend`` per share, optionally ``in_prices``.

    Returns:
        The total-return close, float64, aligned to ``prices``' rows.

    Example:
        >>> px = pd.DataFrame({"ticker": ["X"] * 3, "time": pd.to_datetime(["2015-07-16", "2015-07-17",
        ...                    "2015-07-20"]), "close": [65.59, 66.29, 28.57]})
        >>> div = pd.DataFrame({"ticker": ["X"], "date": pd.to_datetime(["2015-07-20"]), "dividend": [38.39]})
        >>> tr = total_return_close(px, div)
        >>> round(float(tr.iloc[2] / tr.iloc[1] - 1), 4)  # a spin-off day: +1.0%, not -56.9%
        0.0101
    """
    df = _long(prices)
    day = pd.to_datetime(df["time"])
    day = day.dt.tz_localize(None) if day.dt.tz is not None else day
    df = df.assign(_day=day.astype("datetime64[ns]")).sort_values(["ticker", "_day"], kind="stable")
    d = dividends
    if "in_prices" in d.columns:
        d = d[~d["in_prices"].fillna(False).astype(bool)]
    d = (
        pd.DataFrame(
            {
                "ticker": d["ticker"].astype(str),
                "_day": pd.to_datetime(d["date"]).astype("datetime64[ns]"),
                "cash": d["dividend"].astype(float),
            }
        )
        .dropna()
        .sort_values("_day")
    )
    # each distribution on its ex-date's bar, or the next bar
    bars = df[["ticker", "_day", "_row"]].sort_values("_day")
    on = pd.merge_asof(d, bars, on="_day", by="ticker", direction="forward").dropna(subset=["_row"])
    cash = on.groupby("_row")["cash"].sum()
    df["_cash"] = df["_row"].map(cash).fillna(0.0)
    close = df["close"].astype(float)
    prev = close.groupby(df["ticker"], sort=False).shift()
    growth = (close + df["_cash"]) / prev
    level = close
    if "adj_close" in df.columns:  # the source's own total return wins where it has one on both days
        adj = df["adj_close"].astype(float)
        growth = (adj / adj.groupby(df["ticker"], sort=False).shift()).fillna(growth)
        level = close.fillna(adj)
    index = growth.fillna(1.0).groupby(df["ticker"], sort=False).cumprod()
    scale = level.groupby(df["ticker"], sort=False).transform("last") / index.groupby(
        df["ticker"], sort=False
    ).transform("last")
    out = (index * scale).set_axis(df["_row"].to_numpy())
    return pd.Series(out.sort_index().to_numpy(), index=prices.index, name="tr_close", dtype="float64")


# -- returns that keep a series' meaning ------------------------------------------------------------------------

#: the columns a return never spans a change of within a ticker: the price basis of the bar (``as_traded`` /
#: ``adjusted_only`` / ``price_only``), the reference date of the adjusted close's chain and the source of the bar
#: (history/SOURCES.md), and :data:`CHANGES`, the count ``.fds.resample`` keeps of those changes inside each bar
BREAKS = ("basis", "adjusted_as_of", "price_source", "series_breaks")
#: the column ``.fds.resample`` writes: how many changes of basis / adjusted_as_of / price_source a bar holds
CHANGES = "series_breaks"
#: the attribute ``.fds.resample(rule)`` sets: the frame's step, which the return helpers read as its calendar
FREQ_ATTR = "freq"

Period = int | str | pd.DateOffset | pd.Timedelta
Freq = str | pd.DateOffset | pd.DatetimeIndex | None


def price_column(frame: pd.DataFrame, column: str | None = None) -> str:
    """The price column a return helper uses: ``column`` if the frame has it, else the one the frame's data means.

    Without ``column``: ``adj_close`` (the split- and dividend-adjusted close: a total return) for a frame of the
    price history (it has ``adjusted_as_of``; its ``close`` is missing wherever no as-traded close exists, and
    returns compare within one ``adjusted_as_of``: history/SOURCES.md), for a frame without ``close``, and for a
    frame whose ``close`` is missing on a row that has an ``adj_close``; else ``close`` (the as-traded close of
    ``fdkit.prices``: a price return).

    Args:
        frame: a price frame.
        column: the column asked for, or ``None``.

    Returns:
        The column's name.

    Raises:
        BadRequestError: the frame has no such column, or no price column at all (naming the columns it has).

    Example:
        >>> px = pd.DataFrame({"close": [1.0, None], "adj_close": [0.9, 1.0]})
        >>> price_column(px), price_column(px[["close"]]), price_column(px, "close")
        ('adj_close', 'close', 'close')
    """
    from fdkit.errors import BadRequestError  # noqa: PLC0415 - keeps this module's import light

    have = ", ".join(map(str, frame.columns)) or "none"
    if column is not None:
        if column not in frame.columns:
            raise BadRequestError(f"the frame has no price column {column!r}; its columns: {have}")
        return column
    if "adj_close" in frame.columns:
        adjusted = frame["adj_close"].notna().to_numpy()
        if "close" not in frame.columns or "adjusted_as_of" in frame.columns:
            return "adj_close"
        if (adjusted & frame["close"].isna().to_numpy()).any():
            return "adj_close"
    if "close" in frame.columns:
        return "close"
    raise BadRequestError(
        f"no price column (close or adj_close) to compute returns from: pass column=...; the frame's columns: {have}"
    )


def _date_values(frame: pd.DataFrame) -> tuple[str, np.ndarray]:
    from fdkit.errors import BadRequestError  # noqa: PLC0415

    names = [str(n) for n in frame.index.names if n is not None]
    for name in reversed(names):
        level = frame.index.get_level_values(name)
        if name != "ticker" and pd.api.types.is_datetime64_any_dtype(level):
            days = pd.DatetimeIndex(level)
            days = days.tz_localize(None) if days.tz is not None else days  # the wall clock: bins are calendar days
            return name, days.as_unit("ns").to_numpy()
    raise BadRequestError("returns need a frame indexed (ticker, <date>) or by a date: e.g. fdkit.prices(...)")


def as_period(periods: Period) -> int | BaseOffset:
    """A return's period checked: rows (an int >= 1) or a calendar offset that reaches forward in time.

    Args:
        periods: an int, an offset alias (``"12ME"``), a ``pd.DateOffset`` or a ``pd.Timedelta``.

    Returns:
        The int, or the pandas offset.

    Raises:
        BadRequestError: anything else (a bool, a number below 1, an unknown alias, a period of zero length).

    Example:
        >>> as_period(12), as_period("12ME")
        (12, <12 * MonthEnds>)
    """
    from fdkit.errors import BadRequestError  # noqa: PLC0415

    if isinstance(periods, bool):
        raise BadRequestError(f"periods must be a whole number of rows >= 1 or a calendar period, not {periods!r}")
    if isinstance(periods, int | np.integer):
        if int(periods) < 1:
            raise BadRequestError(f"periods must be >= 1 rows (or a calendar period such as '12ME'), not {periods}")
        return int(periods)
    try:
        offset = pd.tseries.frequencies.to_offset(periods)
    except (TypeError, ValueError):
        raise BadRequestError(
            f"periods must be a whole number of rows >= 1 or a pandas offset ('12ME', '21D', "
            f"pd.DateOffset(months=1)), not {periods!r}"
        ) from None
    probe = pd.Timestamp("2001-01-31")
    if not probe + offset > probe:
        raise BadRequestError(f"a calendar period must reach forward in time ('12ME', '21D'), not {periods!r}")
    return offset


def _skip(step: int | BaseOffset, skip: Period, forward: bool) -> int | BaseOffset:
    """``skip`` checked against ``periods``: of the same kind, and shorter."""
    from fdkit.errors import BadRequestError  # noqa: PLC0415

    gap = as_period(skip)
    probe = pd.Timestamp("2001-01-31")
    if isinstance(step, int) != isinstance(gap, int):
        raise BadRequestError(f"skip={skip!r} must be of the kind of periods (rows or a calendar period)")
    if forward:
        raise BadRequestError("skip= is for returns up to a date (momentum), not for forward returns")
    if isinstance(step, int) and isinstance(gap, int):
        shorter = gap < step
    else:
        assert isinstance(step, BaseOffset) and isinstance(gap, BaseOffset)  # noqa: S101 - checked above
        shorter = probe - gap > probe - step
    if not shorter:
        raise BadRequestError(f"skip={skip!r} must be shorter than periods={step!r}")
    return gap


class _Series:
    """A frame's rows sorted by ticker and date, with each row's series, calendar step and group bounds."""

    def __init__(self, frame: pd.DataFrame, breaks: tuple[str, ...] | list[str] | None, freq: Freq) -> None:
        self.date_name, days = _date_values(frame)
        if "ticker" in (frame.index.names or []):
            ticks = pd.factorize(frame.index.get_level_values("ticker"))[0]
        else:
            ticks = np.zeros(len(frame), dtype=np.int64)
        self.order = np.lexsort((days, ticks))
        self.ticks, self.days = ticks[self.order], days[self.order]
        n = len(frame)
        first = np.ones(n, dtype=bool)
        first[1:] = self.ticks[1:] != self.ticks[:-1]
        starts = np.flatnonzero(first)
        self.start = np.repeat(starts, np.diff(np.append(starts, n)))
        self.end = np.repeat(np.append(starts[1:], n), np.diff(np.append(starts, n)))
        self.segment = np.cumsum(first | self._breaks(frame, breaks))
        self.freq: Any = freq if freq is not None else frame.attrs.get(FREQ_ATTR)
        self._calendar(frame)

    def _breaks(self, frame: pd.DataFrame, breaks: tuple[str, ...] | list[str] | None) -> np.ndarray:
        from fdkit.errors import BadRequestError  # noqa: PLC0415

        if breaks is None:
            cols = [c for c in BREAKS if c in frame.columns]
        else:
            cols = list(breaks)
            absent = [c for c in cols if c not in frame.columns]
            if absent:
                raise BadRequestError(
                    f"breaks={absent} name no column of the frame; its columns: {', '.join(map(str, frame.columns))}"
                )
        new = np.zeros(len(frame), dtype=bool)
        for col in cols:
            values = frame[col].to_numpy()[self.order] if col != CHANGES else None
            if col == CHANGES:
                counts = pd.to_numeric(frame[col], errors="coerce").fillna(0).to_numpy()[self.order]
                new |= counts > 0
                continue
            codes = pd.factorize(pd.Series(values), use_na_sentinel=True)[0]  # a missing label is a label too
            new[1:] |= codes[1:] != codes[:-1]
        return new

    def _calendar(self, frame: pd.DataFrame) -> None:
        """Each row's step in the calendar: a bin of ``freq``, else a day of the panel's trading calendar."""
        if self.freq is None and len(self.days):
            unique = pd.DatetimeIndex(np.unique(self.days))
            if len(unique) >= 3:
                with warnings.catch_warnings():  # pandas 3 warns that infer_freq will return an offset
                    warnings.simplefilter("ignore")
                    inferred = pd.infer_freq(unique)
                self.freq = pd.tseries.frequencies.to_offset(inferred) if inferred is not None else None
        if isinstance(self.freq, pd.DatetimeIndex):
            self.trading: pd.DatetimeIndex | None = pd.DatetimeIndex(self.freq).sort_values()
        elif self.freq is None:
            counts = pd.Series(self.ticks).groupby(self.days).nunique()
            floor = max(1.0, float(counts.median()) / 10.0) if len(counts) else 1.0
            self.trading = pd.DatetimeIndex(counts.index[counts.to_numpy() >= floor])  # stray bars are no day
        else:
            self.trading = None
        self.pos = self.steps(self.days, side="floor")

    def steps(self, days: np.ndarray, side: str) -> np.ndarray:
        """The calendar step of each day: its ``freq`` bin, or its trading day (the one on or before / after)."""
        if self.trading is not None:
            cal = self.trading.as_unit("ns").to_numpy() if len(self.trading) else np.array([], dtype="M8[ns]")
            at = np.searchsorted(cal, days, side="right") - 1
            if side == "ceil":
                exact = (at >= 0) & (cal[np.clip(at, 0, None)] == days) if len(cal) else np.zeros(len(days), bool)
                at = np.where(exact, at, at + 1)
            return at.astype(np.int64)
        if not len(days):
            return np.array([], dtype=np.int64)
        order = np.argsort(days, kind="stable")  # a Grouper bins sorted dates: sort, bin, put back
        frame = pd.DataFrame({"d": pd.DatetimeIndex(days[order])})
        binned = frame.groupby(pd.Grouper(key="d", freq=self.freq)).ngroup().to_numpy(dtype=np.int64)
        out = np.empty(len(days), dtype=np.int64)
        out[order] = binned
        return out

    def partners(self, periods: int | BaseOffset, forward: bool, *, one_series: bool = True) -> np.ndarray:
        """For each sorted row, the sorted row its return is taken against (-1: none inside the rules)."""
        n = len(self.days)
        idx = np.arange(n)
        if isinstance(periods, int):
            other = idx + periods if forward else idx - periods
            inside = (other < self.end) if forward else (other >= self.start)
            other = np.where(inside, other, -1)
            ok = other >= 0
            span = np.abs(self.pos[np.clip(other, 0, None)] - self.pos)
            ok &= span <= periods  # a window of n steps: no hole in the calendar inside it
        else:
            stamps = pd.DatetimeIndex(self.days)
            target = (stamps + periods if forward else stamps - periods).as_unit("ns").to_numpy()
            other = np.full(n, -1, dtype=np.int64)
            for lo in np.unique(self.start):
                hi = int(self.end[lo])
                seg = self.days[lo:hi]
                if forward:
                    at = lo + np.searchsorted(seg, target[lo:hi], side="left")
                    other[lo:hi] = np.where(at < hi, at, -1)
                else:
                    at = lo + np.searchsorted(seg, target[lo:hi], side="right") - 1
                    other[lo:hi] = np.where(at >= lo, at, -1)
            ok = other >= 0
            both = np.concatenate([self.days, target])
            if self.trading is None:
                bins = self.steps(both, side="floor")
                row_bin, target_bin = bins[:n], bins[n:]
            else:
                row_bin, target_bin = self.pos, self.steps(target, side="ceil" if forward else "floor")
            ok &= row_bin[np.clip(other, 0, None)] == target_bin  # the price at the period's end is there
        if one_series:
            ok &= self.segment[np.clip(other, 0, None)] == self.segment  # one series: no basis or source change
        return np.where(ok, other, -1)

    def aligned(self, sorted_values: np.ndarray) -> np.ndarray:
        """Sorted-row values back in the frame's order."""
        out = np.empty_like(sorted_values)
        out[self.order] = sorted_values
        return out


def series_ids(frame: pd.DataFrame, breaks: tuple[str, ...] | list[str] | None = None) -> pd.Series:
    """Which series each row belongs to: a new one starts at each ticker and at each change of ``breaks``.

    Args:
        frame: a frame indexed ``(ticker, <date>)`` (or by a date).
        breaks: the columns a change of which starts a new series (default: those of :data:`BREAKS` the frame has).

    Returns:
        An int64 series id per row, on the frame's index.

    Example:
        >>> idx = pd.MultiIndex.from_product([["A"], pd.bdate_range("2024-01-01", periods=3)], names=["ticker", "time"])
        >>> px = pd.DataFrame({"close": [1.0, 2.0, 3.0], "price_source": ["x", "y", "y"]}, index=idx)
        >>> series_ids(px).tolist()
        [1, 2, 2]
    """
    s = _Series(frame, breaks, freq=pd.DatetimeIndex([]))
    return pd.Series(s.aligned(s.segment), index=frame.index, name="series", dtype="int64")


def period_returns(
    prices: pd.DataFrame,
    periods: Period = 1,
    *,
    column: str | None = None,
    kind: str = "simple",
    forward: bool = False,
    freq: Freq = None,
    breaks: tuple[str, ...] | list[str] | None = None,
    skip: Period | None = None,
) -> pd.Series:
    """Returns per ticker that never span a change of series or a hole in the calendar.

    A return compares two rows of one ticker: ``periods`` rows apart (an int), or a calendar period apart (a
    pandas offset: ``"12ME"``, ``"21D"``, ``pd.DateOffset(months=1)``: the last row on or before ``date - period``,
    or for a forward return the first on or after ``date + period``). It is missing (NaN) where:

    * the two rows belong to different series: a change of ``basis``, ``adjusted_as_of`` or ``price_source`` lies
      between them (or inside a bar between them: ``series_breaks`` of ``.fds.resample``), see ``breaks``;
    * the window is longer than its period in calendar steps: ``n`` rows must span at most ``n`` steps, and a
      calendar period's far end must be the row of the step it falls in (a missing month after a monthly resample,
      a day the ticker has no bar while the panel trades).

    The steps are the bins of ``freq`` (``"ME"``, ``"W-FRI"``; by default the frame's ``attrs["freq"]``, which
    ``.fds.resample`` sets, else the step pandas infers from the dates), else the panel's trading days: the dates on
    which at least a tenth as many tickers have a row as on the median date (a stray bar on a holiday is no day).
    A frame of one ticker on daily bars has only its own dates: pass ``freq="B"`` or a trading calendar to find
    its holes.

    Args:
        prices: a price frame indexed ``(ticker, <date>)`` (or by a date).
        periods: rows (an int >= 1) or a calendar period (an offset alias or object).
        column: the price column (default: :func:`price_column`'s choice).
        kind: ``simple`` (p_t / p_s - 1) or ``log`` (ln p_t - ln p_s).
        forward: from each row to the future one (``fwd``) instead of from the past one to it.
        freq: the calendar's step: an offset alias, an offset, or a DatetimeIndex of trading days.
        breaks: the columns whose change ends a series (default: those of :data:`BREAKS` the frame has; ``()``:
            none).
        skip: leave out the most recent part of the window (``periods=12, skip=1`` or ``"12ME"``, ``"1ME"``: the
            12-1 momentum return, from ``t - 12`` to ``t - 1``, labelled ``t``); both ends follow the rules above,
            and only the window's own part must be one series. Same kind as ``periods`` (rows or calendar), shorter.

    Returns:
        A float64 series on the frame's index; ``attrs["column"]`` names the price column used.

    Raises:
        BadRequestError: a bad ``kind``, ``periods``, ``column`` or ``breaks``.

    Example:
        >>> days = pd.to_datetime(["2024-01-31", "2024-02-29", "2024-04-30", "2024-05-31"])  # March is missing
        >>> idx = pd.MultiIndex.from_product([["A"], days], names=["ticker", "time"])
        >>> px = pd.DataFrame({"close": [10.0, 11.0, 12.0, 13.2]}, index=idx)
        >>> period_returns(px, 1, freq="ME").round(2).tolist()
        [nan, 0.1, nan, 0.1]
        >>> period_returns(px, "3ME", freq="ME").round(2).tolist()  # Jan -> Apr, Feb -> May
        [nan, nan, 0.2, 0.2]
        >>> period_returns(px, "4ME", freq="ME", skip="1ME").round(2).tolist()  # Jan -> Apr, labelled May
        [nan, nan, nan, 0.2]
    """
    from fdkit.errors import BadRequestError  # noqa: PLC0415

    if kind not in ("simple", "log"):
        raise BadRequestError(f"kind must be 'simple' or 'log', not {kind!r}")
    step = as_period(periods)
    name = price_column(prices, column)
    s = _Series(prices, breaks, freq)
    price = pd.to_numeric(prices[name], errors="coerce").astype("float64").to_numpy()[s.order]
    if skip is None:
        other = s.partners(step, forward)
        there = price[np.clip(other, 0, None)] if len(price) else price
        far, near = (there, price) if forward else (price, there)
    else:
        gap = _skip(step, skip, forward)
        recent, other = s.partners(gap, forward, one_series=False), s.partners(step, forward, one_series=False)
        other = np.where(
            (recent >= 0) & (s.segment[np.clip(recent, 0, None)] == s.segment[np.clip(other, 0, None)]), other, -1
        )
        far = price[np.clip(other if forward else recent, 0, None)] if len(price) else price
        near = price[np.clip(recent if forward else other, 0, None)] if len(price) else price
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = far / near
        value = np.log(np.where(ratio > 0, ratio, np.nan)) if kind == "log" else ratio - 1.0
    value = np.where(other >= 0, value, np.nan)
    out = pd.Series(s.aligned(value), index=prices.index, dtype="float64")
    out.attrs["column"] = name
    return out
