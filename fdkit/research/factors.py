"""Factor and event studies on tidy ``(ticker, date)`` panels: the research layer behind ``.fds``.

Every function takes the long frames fdkit returns (one row per ticker and date; the same shape for one ticker or
many) and returns frames indexed by date (or by event day), so results line up with pandas and plot with
``.fds.plot``:

* :func:`forward_returns`: ``fwd_<h>`` = close ``h`` rows ahead / close - 1, per ticker.
* :func:`rank_ic`: per-date Spearman rank correlation of a factor with forward returns (one column per horizon);
  :func:`ic_breadth`: the names behind each date's IC; :func:`ic_summary`: mean, standard deviation, an
  overlap-robust (Newey-West) t-statistic, dates and names per horizon (the IC decay).
* :func:`quantiles`: per-date factor quantile (1 = lowest .. n = highest).
* :func:`quantile_returns`: per-date mean forward return of each quantile and the long-short spread (top minus
  bottom), optionally cumulated.
* :func:`event_study`: mean abnormal return (against a benchmark) and its cumulation around events, with
  cross-sectional and date-clustered t-statistics; :func:`event_returns`: the per-event table behind it.

Example:
    >>> import pandas as pd
    >>> days = pd.bdate_range("2024-01-01", periods=4)
    >>> idx = pd.MultiIndex.from_product([["A", "B"], days], names=["ticker", "time"])
    >>> px = pd.DataFrame({"close": [10.0, 11, 12, 13, 20, 19, 18, 17]}, index=idx)
    >>> forward_returns(px, [1])["fwd_1"].round(3).tolist()
    [0.1, 0.091, 0.083, nan, -0.05, -0.053, -0.056, nan]
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from fdkit.errors import BadRequestError
from fdkit.research.returns import Freq, Period, as_period, period_returns, price_column, series_ids

__all__ = [
    "event_returns",
    "event_study",
    "forward_returns",
    "horizon_of",
    "ic_breadth",
    "ic_summary",
    "newey_west_t",
    "quantile_returns",
    "quantile_turnover",
    "quantiles",
    "rank_ic",
]


def _date_level(df: pd.DataFrame) -> str:
    """The name of the panel's date level (the index level that is not ``ticker``)."""
    names = [n for n in (df.index.names or []) if n is not None]
    if "ticker" not in names or len(names) != 2:
        raise BadRequestError("a panel is indexed (ticker, date): e.g. fdkit.prices(...) or a frame joined to it")
    return str(next(n for n in names if n != "ticker"))


def _column(df: pd.DataFrame, name: str, what: str) -> pd.Series:
    if name not in df.columns:
        raise BadRequestError(f"the panel has no {what} column {name!r}; columns: {', '.join(map(str, df.columns))}")
    return pd.to_numeric(df[name], errors="coerce").astype("float64")


def forward_returns(
    prices: pd.DataFrame,
    horizons: Iterable[Period] = (1, 21),
    column: str | None = None,
    *,
    to_last_price: bool = False,
    freq: Freq = None,
    breaks: tuple[str, ...] | list[str] | None = None,
) -> pd.DataFrame:
    """Forward simple returns per ticker: ``fwd_<h>`` = value ``h`` ahead / value - 1, within one series.

    A forward return is NaN where it would span a change of series (``basis``, ``adjusted_as_of``,
    ``price_source``, ``series_breaks``) or a hole in the calendar: the rules of
    :func:`fdkit.research.returns.period_returns`.

    Args:
        prices: a ``(ticker, date)`` panel with ``column``.
        horizons: steps ahead: rows (ints: trading days for daily bars, months for a monthly panel) or calendar
            periods (``"1ME"``, ``"12ME"``, ``"21D"``: columns ``fwd_1ME`` ...).
        column: the price column (``None``: :func:`fdkit.research.returns.price_column`'s choice).
        to_last_price: a ticker whose prices stop before the panel's last date (it stopped trading: acquired,
            delisted, bankrupt) keeps the return to its last price where its horizon runs past it, as an
            investor holding it until it stopped trading would (no delisting return is in the data, so the
            last traded price stands in for it), if that price is of the row's series. Off by default: a gap in
            the data would read as a delisting.
        freq: the calendar's step (see :func:`fdkit.research.returns.period_returns`).
        breaks: the columns whose change ends a series (default: those of ``BREAKS`` the panel has).

    Returns:
        One float64 column per horizon on the panel's index (NaN where the future is not in the panel);
        ``attrs["column"]`` names the price column.

    Raises:
        BadRequestError: for a frame that is no panel, a missing column or a horizon below 1.

    Example:
        >>> days = pd.to_datetime(["2024-01-31", "2024-02-29", "2024-04-30"])
        >>> idx = pd.MultiIndex.from_product([["A"], days], names=["ticker", "time"])
        >>> fwd = forward_returns(pd.DataFrame({"close": [10.0, 11.0, 12.1]}, index=idx), [1], freq="ME")
        >>> fwd["fwd_1"].round(2).tolist()  # February's next month (March) is missing
        [0.1, nan, nan]
    """
    date = _date_level(prices)
    hs = list(horizons)
    try:
        if not hs:
            raise BadRequestError("no horizon")
        for h in hs:
            as_period(h)
    except BadRequestError:
        raise BadRequestError(
            f"horizons must be whole numbers >= 1 or calendar periods ('1ME', '21D'), not {hs}"
        ) from None
    name = price_column(prices, column)
    out = pd.DataFrame(
        {f"fwd_{h}": period_returns(prices, h, column=name, forward=True, freq=freq, breaks=breaks) for h in hs},
        index=prices.index,
    )
    if to_last_price and len(prices):
        px = _column(prices, name, "price")
        series = series_ids(prices, breaks)
        when = pd.Series(prices.index.get_level_values(date), index=prices.index)
        tickers = prices.index.get_level_values("ticker")
        priced = pd.DataFrame({"px": px, "series": series, "when": when})[px.notna().to_numpy()]
        last = priced.sort_values("when", kind="stable").groupby(level="ticker", observed=True)[["px", "series"]].last()
        stopped = pd.Series(tickers.map(last["px"].to_dict()), index=prices.index, dtype="float64")
        same_series = pd.Series(tickers.map(last["series"].to_dict()), index=prices.index) == series
        ended = when.groupby(level="ticker", observed=True).transform("max") < when.max()
        for h in hs:
            col = f"fwd_{h}"
            fill = ended & out[col].isna() & px.notna() & same_series  # its last price, if of the row's series
            out.loc[fill, col] = stopped[fill] / px[fill] - 1.0
    out.attrs["column"] = name
    return out


def _ranks(df: pd.DataFrame, date: str, cols: Sequence[str]) -> pd.DataFrame:
    return df.groupby(level=date, observed=True)[list(cols)].rank(method="average")


def rank_ic(panel: pd.DataFrame, factor: str, forward: str | Sequence[str]) -> pd.DataFrame:
    """Per-date Spearman rank correlation (information coefficient) of a factor with forward returns.

    Args:
        panel: a ``(ticker, date)`` panel with the factor and forward-return columns.
        factor: the factor column.
        forward: one forward-return column or several (IC decay across horizons).

    Returns:
        A frame indexed by date, one column per forward column; a date with fewer than 3 tickers having both
        values is left out.

    Raises:
        BadRequestError: for a frame that is no panel or a missing column.
    """
    date = _date_level(panel)
    fwd = [forward] if isinstance(forward, str) else list(forward)
    out = {}
    for f in fwd:
        pair = pd.DataFrame(
            {"x": _column(panel, factor, "factor"), "y": _column(panel, f, "forward-return")}, index=panel.index
        ).dropna()
        n = pair.groupby(level=date, observed=True)["x"].transform("size")
        pair = pair[n >= 3]
        r = _ranks(pair, date, ["x", "y"])
        centred = r - r.groupby(level=date, observed=True).transform("mean")
        sums = pd.DataFrame({"xy": centred["x"] * centred["y"], "xx": centred["x"] ** 2, "yy": centred["y"] ** 2})
        s = sums.groupby(level=date, observed=True).sum()
        denominator = (s["xx"] * s["yy"]) ** 0.5
        out[f] = s["xy"] / denominator.where(denominator > 0)
    return pd.DataFrame(out).sort_index()


def ic_breadth(panel: pd.DataFrame, factor: str, forward: str | Sequence[str]) -> pd.DataFrame:
    """How many names each date's IC is computed from (both the factor and the forward return known).

    Args:
        panel: a ``(ticker, date)`` panel with the factor and forward-return columns.
        factor: the factor column.
        forward: one forward-return column or several.

    Returns:
        A frame indexed by date, one count column per forward column (the dates :func:`rank_ic` keeps).
    """
    date = _date_level(panel)
    fwd = [forward] if isinstance(forward, str) else list(forward)
    x = _column(panel, factor, "factor")
    counts = {
        f: (x.notna() & _column(panel, f, "forward-return").notna()).groupby(level=date, observed=True).sum()
        for f in fwd
    }
    out = pd.DataFrame(counts).astype("int64")
    return out.where(out >= 3).dropna(how="all").astype("Int64").sort_index()


def horizon_of(column: str) -> int | None:
    """The horizon in rows a forward-return column spans, read from its name (``fwd_12`` -> 12).

    Example:
        >>> horizon_of("fwd_12"), horizon_of("ret")
        (12, None)
    """
    head, _, tail = str(column).rpartition("_")
    return int(tail) if head and tail.isdigit() and int(tail) >= 1 else None


def newey_west_t(values: np.ndarray, lags: int) -> float:
    """The t-statistic of a series' mean with Newey-West (Bartlett kernel) standard errors.

    The variance of the mean is ``(g0 + 2 sum_j (1 - j / (L + 1)) g_j) / T`` with autocovariances ``g_j`` of the
    demeaned series, times ``T / (T - 1)`` (the small-sample correction of a regression on a constant, as
    statsmodels applies it); with ``lags=0`` this is the ordinary ``mean / (std / sqrt(T))``.

    Args:
        values: the series (no missing values).
        lags: the number of autocovariances kept (``horizon - 1`` for overlapping ``horizon``-step returns).

    Returns:
        The t-statistic (NaN for fewer than two values or no variance).

    Example:
        >>> round(newey_west_t(np.array([0.1, 0.2, 0.3]), 0), 3)
        3.464
    """
    x = np.asarray(values, dtype="float64")
    n = len(x)
    if n < 2:
        return float("nan")
    e = x - x.mean()
    lags = max(0, min(int(lags), n - 1))
    var = float(e @ e) / n
    for j in range(1, lags + 1):
        var += 2.0 * (1.0 - j / (lags + 1.0)) * float(e[j:] @ e[:-j]) / n
    var = var / n * n / (n - 1)
    return float(x.mean() / np.sqrt(var)) if var > 0 else float("nan")


def ic_summary(
    ic: pd.DataFrame,
    *,
    names: pd.DataFrame | None = None,
    lags: dict[str, int] | None = None,
    min_dates: int = 12,
    min_names: int = 10,
) -> pd.DataFrame:
    """Mean IC, its standard deviation, an overlap-robust t-statistic, the number of dates and of names per date.

    Forward returns longer than the panel's spacing overlap (twelve-month returns sampled monthly share eleven
    months), so their ICs are autocorrelated and the plain ``mean / (std / sqrt(n))`` overstates significance. The
    t-statistic here uses Newey-West standard errors with ``horizon - 1`` lags (the horizon read from the column
    name, ``fwd_<h>``; ``lags`` overrides it); one-step horizons get the plain statistic. Below ``min_dates``
    dates, or below ``min_names`` names a date on average, the t-statistic is NaN and a warning says why: a mean IC
    of three stocks a month is no evidence.

    Args:
        ic: the output of :func:`rank_ic`.
        names: the output of :func:`ic_breadth` (per-date counts), for ``names_mean`` / ``names_min`` and the
            breadth check.
        lags: Newey-West lags per column, where the column name does not say the horizon.
        min_dates: the fewest dates a t-statistic is reported for.
        min_names: the fewest names per date (on average) a t-statistic is reported for.

    Returns:
        One row per forward-return column: ``mean``, ``std``, ``t_stat`` (Newey-West), ``n`` (dates), ``nw_lags``,
        ``names_mean``, ``names_min``.

    Example:
        >>> ic = pd.DataFrame({"fwd_1": [0.1, 0.2, 0.3]})
        >>> ic_summary(ic, min_dates=3, min_names=0).round(3).loc["fwd_1", ["mean", "std", "t_stat", "n"]].tolist()
        [0.2, 0.1, 3.464, 3.0]
    """
    rows = {}
    short: list[str] = []
    for col in ic.columns:
        x = ic[col].dropna()
        lag = (lags or {}).get(str(col))
        if lag is None:
            lag = (horizon_of(str(col)) or 1) - 1
        count = names[col].reindex(x.index).astype("float64") if names is not None and col in names else None
        breadth = float(count.mean()) if count is not None and len(count) else float("nan")
        t = newey_west_t(x.to_numpy(), lag)
        too_short = len(x) < min_dates
        too_narrow = count is not None and not (breadth >= min_names)
        if too_short or too_narrow:
            short.append(
                f"{col} ({len(x)} dates" + (f", {breadth:.1f} names a date" if count is not None else "") + ")"
            )
            t = float("nan")
        rows[col] = {
            "mean": x.mean(),
            "std": x.std(ddof=1),
            "t_stat": t,
            "n": float(len(x)),
            "nw_lags": float(lag),
            "names_mean": breadth,
            "names_min": float(count.min()) if count is not None and len(count) else float("nan"),
        }
    if short:
        warnings.warn(
            f"ic_summary: no t-statistic for {', '.join(short)}: fewer than {min_dates} dates or {min_names} names "
            "a date (min_dates=, min_names= lower the bar)",
            stacklevel=3,
        )
    columns = ["mean", "std", "t_stat", "n", "nw_lags", "names_mean", "names_min"]
    return pd.DataFrame.from_dict(rows, orient="index", columns=columns)


def quantiles(panel: pd.DataFrame, factor: str, n: int = 5) -> pd.Series:
    """Per-date factor quantile: 1 (lowest) .. ``n`` (highest), as ``pandas.qcut`` of the ranks (ties by order).

    Args:
        panel: a ``(ticker, date)`` panel with the factor column.
        factor: the factor column.
        n: the number of buckets (2 or more).

    Returns:
        An ``Int64`` series on the panel's index (missing where the factor is, or where a date has fewer
        tickers than buckets).

    Raises:
        BadRequestError: for a frame that is no panel, a missing column or ``n`` below 2.
    """
    date = _date_level(panel)
    if int(n) < 2:
        raise BadRequestError(f"quantiles need n >= 2 buckets, not {n}")
    x = _column(panel, factor, "factor")
    grouped = x.groupby(level=date, observed=True)
    rank = grouped.rank(method="first")
    count = grouped.transform("count")
    # pandas.qcut of the ranks: bucket k holds the ranks up to 1 + k (N - 1) / n (intervals closed on the right)
    position = (rank - 1.0) * n / (count - 1.0).where(count > 1)
    bucket = np.ceil(position - 1e-9).clip(1, n)
    bucket = bucket.where(count >= n)
    return bucket.astype("Int64").rename(f"{factor}_quantile")


def quantile_turnover(panel: pd.DataFrame, factor: str, n: int = 5) -> pd.DataFrame:
    """Per date, the share of each quantile's names that were not in it on the previous date.

    Turnover is what rebalancing trades: a factor whose top quintile turns over 80% a month costs far more to hold
    than one at 10%.

    Args:
        panel: a ``(ticker, date)`` panel with the factor column.
        factor: the factor column.
        n: the number of quantiles.

    Returns:
        A frame indexed by date (from the second date on), columns ``q1`` .. ``qn``, values in [0, 1].

    Example:
        >>> days = pd.to_datetime(["2024-01-31", "2024-02-29"])
        >>> idx = pd.MultiIndex.from_product([["A", "B", "C", "D"], days], names=["ticker", "time"])
        >>> panel = pd.DataFrame({"f": [1.0, 4, 2, 3, 3, 2, 4, 1]}, index=idx)
        >>> quantile_turnover(panel, "f", n=2).round(2).to_dict("records")
        [{'q1': 1.0, 'q2': 1.0}]
    """
    date = _date_level(panel)
    q = quantiles(panel, factor, n).dropna()
    frame = pd.DataFrame(
        {"q": q.astype("int64").to_numpy(), "ticker": q.index.get_level_values("ticker").astype(str)},
        index=q.index.get_level_values(date),
    )
    dates = sorted(frame.index.unique())
    rows = {}
    for before, now in zip(dates[:-1], dates[1:], strict=True):
        prev, cur = frame.loc[[before]], frame.loc[[now]]
        rows[now] = {
            f"q{k}": _new_share(set(prev.loc[prev["q"] == k, "ticker"]), set(cur.loc[cur["q"] == k, "ticker"]))
            for k in range(1, n + 1)
        }
    out = pd.DataFrame.from_dict(rows, orient="index", columns=[f"q{k}" for k in range(1, n + 1)])
    out.index.name = date
    return out


def _new_share(before: set[str], now: set[str]) -> float:
    return len(now - before) / len(now) if now else float("nan")


def quantile_returns(
    panel: pd.DataFrame, factor: str, forward: str, n: int = 5, *, cumulative: bool = False
) -> pd.DataFrame:
    """Mean forward return per date of each factor quantile, and the long-short spread (top minus bottom).

    Args:
        panel: a ``(ticker, date)`` panel with the factor and forward-return columns.
        factor: the factor column.
        forward: the forward-return column (its horizon should match the panel's spacing for ``cumulative``).
        n: the number of quantiles.
        cumulative: compound each column over the dates (growth of 1).

    Returns:
        A frame indexed by date with columns ``q1`` .. ``qn`` (``q1``: the lowest factor values) and
        ``long_short``; ``attrs["factor"]`` names the factor, ``attrs["cumulative"]`` says whether compounded.
    """
    date = _date_level(panel)
    q = quantiles(panel, factor, n)
    y = _column(panel, forward, "forward-return")
    frame = pd.DataFrame({"q": q, "y": y}, index=panel.index).dropna()
    table = frame.groupby([frame.index.get_level_values(date), "q"], observed=True)["y"].mean().unstack("q")
    table = table.reindex(columns=range(1, n + 1))
    table.columns = [f"q{int(c)}" for c in table.columns]  # text, so the frame round-trips through Parquet
    table["long_short"] = table[f"q{n}"] - table["q1"]
    table.index.name = date
    if cumulative:
        table = (1.0 + table.fillna(0.0)).cumprod()
    table.attrs["cumulative"] = cumulative
    table.attrs["factor"] = factor  # the plot's legend says which end of the sort each quantile is
    return table


_Windows = tuple[np.ndarray, pd.DataFrame, int, str]
#: the columns an event's date is read from, in order: an earnings release (8-K) before the report's filing
_EVENT_DATES = ("release_date", "date", "filing_date", "transaction_date", "time", "report_period")


#: the regular session closes at 16:00 New York time: news accepted after it moves prices the next session
CLOSE = pd.Timedelta(hours=16)


def _after_close(days: pd.Series, by: pd.Series, times: pd.Series) -> tuple[pd.Series, pd.Series]:
    """Release days moved to the next day where the release's acceptance time is at or after 16:00 New York time.

    Example:
        >>> d = pd.Series(pd.to_datetime(["2016-04-26", "2016-04-26"]))
        >>> t = pd.Series(["2016-04-26T16:30:21-04:00", "2016-04-26T08:00:00-04:00"])
        >>> days, by = _after_close(d, pd.Series(["release_date"] * 2), t)
        >>> days.dt.strftime("%Y-%m-%d").tolist(), by.tolist()
        (['2016-04-27', '2016-04-26'], ['release_datetime (after 16:00 New York: next session)', 'release_datetime'])
    """
    at = pd.to_datetime(times, utc=True, errors="coerce").dt.tz_convert("America/New_York")
    known = at.notna() & days.notna()
    late = known & ((at - at.dt.normalize()) >= CLOSE)
    out = days.where(~late, days + pd.Timedelta(days=1))
    label = by.where(~known, "release_datetime").where(~late, "release_datetime (after 16:00 New York: next session)")
    return out, label


def _event_windows(
    events: pd.DataFrame,
    prices: pd.DataFrame,
    window: tuple[int, int],
    benchmark: str | pd.Series | None,
    column: str | None,
) -> _Windows:
    """The abnormal returns of every event whose window lies inside the price history.

    Returns:
        ``(ar, meta, dropped, benchmark name)``: one row of ``ar`` per kept event (window days as columns), and
        per kept event its input position, ticker, event date and day-0 date.
    """
    lo, hi = int(window[0]), int(window[1])
    if not lo <= 0 <= hi:
        raise BadRequestError(f"the window must contain day 0, not {window}")
    _date_level(prices)
    ev = events.reset_index()
    dated = [c for c in _EVENT_DATES if c in ev.columns]
    if "ticker" not in ev.columns or not dated:
        raise BadRequestError(
            "events need a ticker and a date (release_date, date, filing_date, transaction_date or time)"
        )
    # each day's return within one series (never across a change of basis or source, nor a day the ticker lacks)
    rets = period_returns(prices, 1, column=price_column(prices, column)).sort_index()
    wide = rets.unstack("ticker")
    wide.index = pd.DatetimeIndex(wide.index).tz_localize(None) if getattr(wide.index, "tz", None) else wide.index
    if benchmark is None:
        bench, name = wide.mean(axis=1), "equal-weighted mean of the panel"
    elif isinstance(benchmark, str):
        if benchmark not in wide.columns:
            raise BadRequestError(f"benchmark {benchmark!r} is not in the price panel")
        bench, name = wide[benchmark], benchmark
    else:
        bench, name = benchmark.reindex(wide.index), str(benchmark.name or "given return series")
    abnormal = wide.sub(bench, axis=0)
    days = wide.index
    rows, meta, dropped = [], [], 0
    given = pd.to_datetime(ev[dated[0]])
    stamps, by = given, pd.Series(dated[0], index=ev.index)
    if dated[0] == "release_date" and "release_datetime" in ev.columns:  # the after-close rule where a time is known
        stamps, by = _after_close(stamps, by, ev["release_datetime"])
    if dated[0] == "release_date" and len(dated) > 1:  # an earnings report without a known release: its filing
        by = by.where(stamps.notna(), dated[1])
        stamps = stamps.fillna(pd.to_datetime(ev[dated[1]]))
        given = given.fillna(pd.to_datetime(ev[dated[1]]))
    for i, (ticker, day, event_date) in enumerate(zip(ev["ticker"].astype(str), stamps, given, strict=True)):
        if ticker not in abnormal.columns or pd.isna(day):
            dropped += 1
            continue
        day = day.tz_localize(None) if day.tzinfo else day
        event_date = event_date.tz_localize(None) if event_date.tzinfo else event_date
        pos = int(days.searchsorted(day, side="left"))
        series = abnormal[ticker].to_numpy()
        if pos + lo < 1 or pos + hi >= len(days) or np.isnan(series[pos + lo : pos + hi + 1]).any():
            dropped += 1
            continue
        rows.append(series[pos + lo : pos + hi + 1])
        meta.append((i, ticker, event_date, days[pos], by.iloc[i]))
    frame = pd.DataFrame(meta, columns=["event_id", "ticker", "event_date", "day0", "dated_by"])
    ar = np.vstack(rows) if rows else np.empty((0, hi - lo + 1))
    return ar, frame, dropped, name


def _clustered_t(values: np.ndarray, clusters: np.ndarray) -> np.ndarray:
    """Per column, the t-statistic of the mean across clusters (events sharing a day 0 averaged first)."""
    if not len(values):
        return np.full(values.shape[1], np.nan)
    means = pd.DataFrame(values).groupby(clusters).mean().to_numpy()
    k = means.shape[0]
    if k < 2:
        return np.full(values.shape[1], np.nan)
    return means.mean(axis=0) / (means.std(axis=0, ddof=1) / np.sqrt(k))


def event_returns(
    events: pd.DataFrame,
    prices: pd.DataFrame,
    window: tuple[int, int] = (-5, 20),
    *,
    benchmark: str | pd.Series | None = None,
    column: str | None = None,
) -> pd.DataFrame:
    """Abnormal returns of each event on each day of its window: the table behind :func:`event_study`.

    Same conventions as :func:`event_study` (day 0, the benchmark, events left out).

    Args:
        events: one row per event with ``ticker`` and a date (see :func:`event_study`).
        prices: a ``(ticker, date)`` price panel.
        window: first and last event day, inclusive.
        benchmark: a ticker of ``prices``, a return series by date, or ``None`` (equal-weighted panel mean).
        column: the price column (default: ``close``, or ``adj_close`` where the frame's data means it: see
            :func:`fdkit.research.returns.price_column`). A day's return never spans a change of series or a day
            the ticker lacks (:func:`fdkit.research.returns.period_returns`): such a window leaves its event out.

    Returns:
        A frame indexed ``(event_id, event_day)`` (``event_id``: the event's position in ``events``) with
        ``ticker``, ``event_date``, ``day0`` (the first trading day on or after the event), ``dated_by`` (the
        column the event's date came from), ``date`` (the trading day of the row), ``ar`` (abnormal return) and
        ``car`` (its cumulation from the window's first day);
        ``attrs["benchmark"]`` names the benchmark, ``attrs["events_dropped"]`` counts events left out. The index
        levels are int64, ``ticker`` and ``dated_by`` text: one schema with or without events, so the table
        round-trips through Parquet (``to_parquet`` / ``read_parquet`` give an equal frame), also when empty.

    Example:
        >>> days = pd.bdate_range("2024-01-01", periods=6)
        >>> idx = pd.MultiIndex.from_product([["A", "B"], days], names=["ticker", "time"])
        >>> px = pd.DataFrame({"close": [10.0, 10, 11, 11, 11, 11, 10, 10, 10, 10, 10, 10]}, index=idx)
        >>> ev = pd.DataFrame({"ticker": ["A"], "date": [days[2]]})
        >>> event_returns(ev, px, window=(-1, 1), benchmark="B")["car"].round(2).tolist()
        [0.0, 0.1, 0.1]
    """
    lo, hi = int(window[0]), int(window[1])
    ar, meta, dropped, name = _event_windows(events, prices, window, benchmark, column)
    width = hi - lo + 1
    offsets = np.tile(np.arange(lo, hi + 1), len(meta))
    positions = np.repeat(np.arange(len(meta)), width)
    trading = pd.DatetimeIndex(
        pd.to_datetime(prices.index.get_level_values(_date_level(prices))).unique()
    ).sort_values()
    trading = trading.tz_localize(None) if trading.tz is not None else trading
    day0_pos = trading.searchsorted(pd.DatetimeIndex(meta["day0"])) if len(meta) else np.array([], dtype=int)
    # one schema with or without events (text, plain int64 event ids and days: an empty categorical comes back
    # from Parquet with other categories), so the frame round-trips through Parquet, empty or not
    text = pd.StringDtype(na_value=np.nan)
    out = pd.DataFrame(
        {
            "ticker": pd.array(meta["ticker"].to_numpy(dtype=object)[positions].astype(str), dtype=text),
            "event_date": pd.DatetimeIndex(meta["event_date"].to_numpy()[positions], dtype="datetime64[ns]"),
            "day0": pd.DatetimeIndex(meta["day0"].to_numpy()[positions], dtype="datetime64[ns]"),
            "dated_by": pd.array(meta["dated_by"].to_numpy(dtype=object)[positions].astype(str), dtype=text),
            "date": pd.DatetimeIndex(
                trading[np.repeat(day0_pos, width) + offsets] if len(meta) else [], dtype="datetime64[ns]"
            ),
            "ar": ar.reshape(-1).astype("float64"),
            "car": ar.cumsum(axis=1).reshape(-1).astype("float64"),
        },
        index=pd.MultiIndex.from_arrays(
            [meta["event_id"].to_numpy(dtype=np.int64)[positions], offsets.astype(np.int64)],
            names=["event_id", "event_day"],
        ),
    )
    out.attrs.update(benchmark=name, events_dropped=dropped)
    return out


def _dated_by(meta: pd.DataFrame) -> dict[str, int]:
    """How many of the events used were dated by each column (JSON-ready, for ``attrs``)."""
    return {str(k): int(v) for k, v in meta["dated_by"].value_counts().items()} if len(meta) else {}


def event_study(
    events: pd.DataFrame,
    prices: pd.DataFrame,
    window: tuple[int, int] = (-5, 20),
    *,
    benchmark: str | pd.Series | None = None,
    column: str | None = None,
    per_event: bool = False,
) -> pd.DataFrame:
    """Abnormal returns around events: the mean across events per event day, and its cumulation.

    Day 0 is the first trading day on or after the event's date: an earnings release's ``release_date`` (the 8-K
    that announced the results) where the events carry one, else the first of ``date``, ``filing_date``,
    ``transaction_date``, ``time`` or ``report_period`` (an earnings report without a known release falls back to
    its filing date; ``attrs["dated_by"]`` counts each). Where the release's acceptance time is known
    (``release_datetime``, from the SEC submissions) and is at or after 16:00 New York time, prices react the next
    session, so day 0 is the next trading day (Apple's releases at 16:30). A release dated by day only may come
    after the close too: read CAR[0, +1], not day 0 alone. The abnormal return of a day is the stock's
    simple return minus the benchmark's (a ticker of ``prices``, a return series by date, or by default the
    equal-weighted mean return of the panel's tickers that day). Events whose window is not entirely inside the
    price history are left out (counted in ``attrs``). Events on the same day share the market's news, so besides
    the cross-sectional t-statistics the clustered ones average the events of each day 0 first and test across
    those days.

    Args:
        events: one row per event with ``ticker`` and a date (``release_date``, ``date``, ``filing_date``,
            ``transaction_date``, ``time`` or ``report_period``), as columns or index levels: earnings, filings,
            insider trades, any frame.
        prices: a ``(ticker, date)`` price panel covering the events' tickers (and the benchmark's).
        window: first and last event day, inclusive.
        benchmark: the benchmark (see above).
        column: the price column (default: ``close``, or ``adj_close`` where the frame's data means it: see
            :func:`fdkit.research.returns.price_column`). A day's return never spans a change of series or a day
            the ticker lacks (:func:`fdkit.research.returns.period_returns`): such a window leaves its event out.
        per_event: return the per-event table of :func:`event_returns` instead (for sub-windows, ``|AR|``,
            cross-sectional regressions).

    Returns:
        A frame indexed by event day: ``mean_ar``, ``t_stat`` (cross-sectional), ``car`` (cumulative mean
        abnormal return from the window's first day), ``car_t_stat`` (t-statistic of the events' own CARs),
        ``t_stat_clustered`` and ``car_t_stat_clustered`` (across day-0 dates), ``n`` and ``clusters``;
        ``attrs["events_used"]``, ``attrs["events_dropped"]`` and ``attrs["benchmark"]``.

    Raises:
        BadRequestError: for events without a ticker or a date, a window that does not contain day 0, or an
            unknown benchmark ticker.
    """
    if per_event:
        return event_returns(events, prices, window, benchmark=benchmark, column=column)
    lo, hi = int(window[0]), int(window[1])
    ar, meta, dropped, name = _event_windows(events, prices, window, benchmark, column)
    date = _date_level(prices)
    rel = pd.RangeIndex(lo, hi + 1, name="event_day")
    columns = ["mean_ar", "t_stat", "car", "car_t_stat", "t_stat_clustered", "car_t_stat_clustered"]
    n = ar.shape[0]
    if not n:
        out = pd.DataFrame(np.nan, index=rel, columns=columns).assign(n=0, clusters=0)
    else:
        car = ar.cumsum(axis=1)
        se = ar.std(axis=0, ddof=1) / np.sqrt(n) if n > 1 else np.full(ar.shape[1], np.nan)
        car_se = car.std(axis=0, ddof=1) / np.sqrt(n) if n > 1 else np.full(ar.shape[1], np.nan)
        clusters = meta["day0"].to_numpy()
        out = pd.DataFrame(
            {
                "mean_ar": ar.mean(axis=0),
                "t_stat": ar.mean(axis=0) / se,
                "car": car.mean(axis=0),
                "car_t_stat": car.mean(axis=0) / car_se,
                "t_stat_clustered": _clustered_t(ar, clusters),
                "car_t_stat_clustered": _clustered_t(car, clusters),
                "n": n,
                "clusters": len(set(clusters.tolist())),
            },
            index=rel,
        )
    out.attrs.update(events_used=n, events_dropped=dropped, date_level=date, benchmark=name, dated_by=_dated_by(meta))
    return out
