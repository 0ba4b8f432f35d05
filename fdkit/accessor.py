"""The ``.fds`` DataFrame accessor: ratios, screening, point-in-time joins, panel helpers and plots.

Registered when fdkit is imported. It works on fdkit's long frames (indexed ``(ticker, <date>)``) and delegates
to :mod:`fdkit.research.ratios`, :mod:`fdkit.frames.filters` and :mod:`fdkit.research.plot`.

Example:
    >>> import fdkit
    >>> px = fdkit.prices(["AAPL", "MSFT"], start_date="2023-01-03", end_date="2023-01-31")
    >>> px.fds.wide("close").columns.tolist()
    ['AAPL', 'MSFT']
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from fdkit.frames.basis import basis_of, rebase
from fdkit.frames.filters import apply_filters, filters_from_kwargs
from fdkit.frames.pointintime import filing_times
from fdkit.research import factors as _factors
from fdkit.research import plot as _plot
from fdkit.research.plot import FISCAL_PERIODS_ATTR
from fdkit.research.ratios import FAMILIES, compute_ratios, trailing_twelve_months
from fdkit.research.returns import CHANGES, FREQ_ATTR, Freq, Period, period_returns, price_column, total_return_close
from fdkit.research.sessions import known_from
from fdkit.research.universe import member_mask


def _split_table(df: pd.DataFrame, splits: pd.DataFrame | None) -> pd.DataFrame:
    """The given split table, or ``fdkit.splits`` of the frame's tickers (from the default client)."""
    if splits is not None:
        return splits.reset_index() if "ticker" not in splits.columns else splits
    tickers = sorted(
        {str(t) for t in (df.index.get_level_values("ticker") if "ticker" in (df.index.names or []) else df["ticker"])}
    )
    from fdkit.api import splits as fetch_splits  # noqa: PLC0415 - the accessor fetches only when bases differ

    return fetch_splits(tickers, errors="ignore").reset_index()


def _on_basis_of(statements: pd.DataFrame, prices: pd.DataFrame, splits: pd.DataFrame | None) -> pd.DataFrame:
    """``prices`` on the statements' split basis (unchanged when either frame does not say its basis)."""
    want, have = basis_of(statements), basis_of(prices)
    if want is None or have is None or want == have:
        return prices
    return rebase(prices, want, _split_table(prices, splits), source=have)


__all__ = ["FdsAccessor"]


_OHLCV = {"open": "first", "high": "max", "low": "min", "close": "last", "volume": "sum", "dividend": "sum"}
#: the columns that say what a bar is, not how much: always the period's last row's (``basis``: its own rule)
_LABELS = ("basis", "adjusted_as_of", "price_source", "series_breaks")


def _is_number(s: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)


def _default_rule(column: str, values: pd.Series) -> str:
    """How ``.fds.resample`` aggregates a column by default (the table of its docstring)."""
    if column == "basis":
        return "basis"
    if column == CHANGES:
        return "sum"
    return _OHLCV.get(column, "last")


def _changes(df: pd.DataFrame, labels: list[str]) -> pd.Series:
    """Per row, 1 where a label differs from the ticker's previous row (plus any count the row already carries)."""
    date = _date_level(df)
    flat = pd.DataFrame(
        {
            c: df[c].cat.codes.to_numpy() if isinstance(df[c].dtype, pd.CategoricalDtype) else pd.factorize(df[c])[0]
            for c in labels
        },
        index=df.index,
    )
    ticker = df.index.get_level_values("ticker") if _has_ticker(df) else np.zeros(len(df))
    order = np.lexsort((df.index.get_level_values(date).to_numpy(), pd.factorize(ticker)[0]))
    codes = flat.to_numpy()[order]
    same_ticker = np.zeros(len(df), dtype=bool)
    tick = pd.factorize(ticker)[0][order]
    same_ticker[1:] = tick[1:] == tick[:-1]
    changed = np.zeros(len(df), dtype=np.int64)
    changed[1:] = (codes[1:] != codes[:-1]).any(axis=1)
    changed = np.where(same_ticker, changed, 0)
    out = np.empty(len(df), dtype=np.int64)
    out[order] = changed
    if CHANGES in df.columns:
        out = out + pd.to_numeric(df[CHANGES], errors="coerce").fillna(0).to_numpy(dtype=np.int64)
    return pd.Series(out, index=df.index, dtype="Int64")


def _date_level(df: pd.DataFrame) -> str:
    names = [str(n) for n in df.index.names if n is not None]
    for n in reversed(names):
        if n != "ticker" and pd.api.types.is_datetime64_any_dtype(df.index.get_level_values(n)):
            return n
    raise ValueError("the frame has no date index level; expected an fdkit frame indexed (ticker, <date>)")


def _one_fiscal_period(df: pd.DataFrame, fiscal_period: str) -> pd.DataFrame:
    """The rows of one fiscal period (``FY2016``); a period the frame lacks is refused, naming those it has."""
    from fdkit.errors import BadRequestError

    if "fiscal_period" not in df.columns:
        raise BadRequestError("screen(fiscal_period=...) needs a frame with a fiscal_period column (statements)")
    periods = df["fiscal_period"].astype("string")
    keep = (periods == fiscal_period).fillna(False).to_numpy(dtype=bool)
    if not keep.any():
        have = sorted(set(periods.dropna()), reverse=True)
        raise BadRequestError(
            f"screen(): no rows of fiscal period {fiscal_period!r}; the frame has "
            f"{', '.join(have[:12])}{' ...' if len(have) > 12 else ''}"
        )
    return df[keep]


def _has_ticker(df: pd.DataFrame) -> bool:
    return "ticker" in (df.index.names or [])


def _say_if_mostly_missing(df: pd.DataFrame, column: str, helper: str) -> None:
    """Warn when an explicit price column is missing on rows where the frame has another price (never silent)."""
    other = next((c for c in ("adj_close", "close") if c in df.columns and c != column), None)
    if other is None:
        return
    lacking = df[column].isna().to_numpy() & df[other].notna().to_numpy()
    if lacking.any():
        from fdkit.errors import warn_user

        share = float(lacking.mean())
        why = " (basis adjusted_only: no as-traded close)" if column == "close" and "basis" in df.columns else ""
        warn_user(
            f"{helper}(column={column!r}): {column} is missing on {share:.1%} of the rows where {other} "
            f"has a value{why}, so their returns are NaN; column={other!r} uses the price those rows have"
        )


@pd.api.extensions.register_dataframe_accessor("fds")
class FdsAccessor:
    """``df.fds``: research helpers for fdkit frames."""

    def __init__(self, df: pd.DataFrame) -> None:
        self._df = df

    # -- panel helpers ------------------------------------------------------------------------------------
    def wide(self, column: str) -> pd.DataFrame:
        """Pivot one column of a long ``(ticker, date)`` frame to date x ticker.

        Args:
            column: the column to spread, e.g. ``"close"``.

        Returns:
            A frame with one column per ticker (plain string labels) and the date level as index.

        Raises:
            KeyError: when the column does not exist.

        Example:
            >>> import fdkit
            >>> fdkit.prices(["AAPL", "MSFT"], start_date="2023-01-03", end_date="2023-01-04").fds.wide("close").shape
            (2, 2)
        """
        df = self._df
        if column not in df.columns:
            raise KeyError(f"no column {column!r}; columns: {', '.join(map(str, df.columns))}")
        if not _has_ticker(df):
            return df[[column]]
        date = _date_level(df)
        s = df[column]
        if not s.index.is_unique:
            s = s.groupby(level=["ticker", date], observed=True).last()
        out = s.unstack(level="ticker")
        out.columns = pd.Index([str(c) for c in out.columns], name="ticker")
        out.index.name = date
        return out.sort_index()

    def returns(
        self,
        kind: Literal["simple", "log"] = "simple",
        periods: Period = 1,
        column: str | None = None,
        *,
        freq: Freq = None,
        breaks: tuple[str, ...] | list[str] | None = None,
        skip: Period | None = None,
    ) -> pd.Series:
        """Per-ticker returns of a price column, never across a change of series or a hole in the calendar.

        The return at a row compares its price with the ticker's price ``periods`` rows earlier, or a calendar
        period earlier (``periods="12ME"``: the row on or before the date 12 month ends back). It is NaN where the
        two rows are of different series (a change of ``basis``, ``adjusted_as_of`` or ``price_source`` between
        them, or inside a bar between them: ``series_breaks`` of :meth:`resample`; the price history's rule in
        history/SOURCES.md) or where the window is longer than its period (``n`` rows spanning more than ``n``
        months after a monthly resample with a month missing); see :func:`fdkit.research.returns.period_returns`.

        Args:
            kind: ``simple`` (p_t / p_s - 1) or ``log`` (ln p_t - ln p_s).
            periods: rows (an int >= 1: trading days of daily bars, months of a monthly panel) or a calendar period
                (a pandas offset alias or object: ``"12ME"``, ``"21D"``, ``pd.DateOffset(months=1)``).
            column: the price column; by default ``close``, or ``adj_close`` for a frame of the price history (it
                has ``adjusted_as_of``), without ``close``, or whose ``close`` is missing where ``adj_close`` is
                not (:func:`fdkit.research.returns.price_column`); ``attrs["column"]`` of the result says which.
            freq: the calendar's step (default: ``attrs["freq"]`` set by :meth:`resample`, else inferred, else the
                panel's trading days): an offset alias, an offset, or a DatetimeIndex of trading days.
            breaks: the columns whose change ends a series (default: those of ``basis``, ``adjusted_as_of``,
                ``price_source`` and ``series_breaks`` the frame has; ``()`` for none).
            skip: leave out the window's most recent part: ``periods="12ME", skip="1ME"`` (or ``12, 1`` on a
                monthly panel) is the 12-1 momentum return, from ``t - 12`` to ``t - 1``, labelled ``t``.

        Returns:
            A float64 Series on the frame's index, named ``simple_return`` or ``log_return`` (NaN for the first
            ``periods`` rows of each ticker and wherever the rules above leave the return unknown).

        Raises:
            BadRequestError: a bad ``kind`` or ``periods``, a column or break the frame lacks, or no price column.

        Example:
            >>> import fdkit
            >>> r = fdkit.prices("AAPL", start_date="2023-01-03", end_date="2023-01-06").fds.returns()
            >>> bool(r.isna().iloc[0]), r.attrs["column"]
            (True, 'close')
        """
        name = price_column(self._df, column)
        if column is not None:
            _say_if_mostly_missing(self._df, name, "returns")
        out = period_returns(self._df, periods, column=name, kind=kind, freq=freq, breaks=breaks, skip=skip)
        return out.rename(f"{kind}_return")

    def rebase(self, base: float = 100.0, column: str = "close") -> pd.Series:
        """Each ticker's series divided by its first valid value, times ``base``.

        Args:
            base: value of the first point.
            column: the column to rebase.

        Returns:
            A Series on the frame's index.

        Example:
            >>> import fdkit
            >>> s = fdkit.prices("AAPL", start_date="2023-01-03", end_date="2023-01-06").fds.rebase()
            >>> float(s.iloc[0])
            100.0
        """
        s = self._df[column].astype("float64")
        first: pd.Series | float
        if _has_ticker(self._df):
            first = s.groupby(level="ticker", observed=True, sort=False).transform("first")
        else:
            first = float(s.dropna().iloc[0])
        return (s / first * base).rename(f"{column}_rebased")

    def in_index(
        self, index: Literal["sp500", "sp400", "sp600", "sp1500"], members: pd.DataFrame | None = None
    ) -> pd.DataFrame:
        """The panel's rows whose ticker was a member of ``index`` on the row's own date (no survivorship).

        A company is kept from the day it joined to the day it left, dead companies included (their rows stop
        when they stop trading or leave); a renamed company is matched under the symbol it trades under today.

        Args:
            index: ``sp500``, ``sp400``, ``sp600`` or ``sp1500``.
            members: membership spells (``fdkit.index_members(index)``); fetched with the default client if not
                given.

        Returns:
            The panel restricted to members, in its order.

        Example:
            >>> import fdkit
            >>> px = fdkit.prices(["AAPL", "TSLA"], start_date="2020-12-17", end_date="2020-12-23")
            >>> px.fds.in_index("sp500").loc["TSLA"].index.min().strftime("%Y-%m-%d")  # joined 2020-12-21
            '2020-12-21'
        """
        if members is None:
            from fdkit.api import index_members  # noqa: PLC0415 - the accessor fetches only what it is asked for

            members = index_members(index)
        return self._df[member_mask(self._df.index, members)]

    def resample(self, rule: str, how: str | dict[str, str] | None = None) -> pd.DataFrame:
        """Resample each ticker on its date level: every column survives, by the rule of its meaning.

        ==================================================  =========================================================
        column                                              the bar's value
        ==================================================  =========================================================
        ``open``                                            the period's first row's
        ``high`` / ``low``                                  the highest / lowest
        ``close``, ``adj_close``, ``price``, other numbers  the period's last row's (missing if that row's is: never
                                                            an older day's price)
        ``volume``, ``dividend``                            the sum (missing when no row has one)
        ``basis``                                           ``as_traded`` if every row is, else ``adjusted_only`` if
                                                            a row is (then no open/high/low/close: the service's
                                                            aggregated bars), else the last row's
        ``adjusted_as_of``, ``price_source``, other labels  the period's last row's
        ``series_breaks`` (added)                           how many changes of ``basis`` / ``adjusted_as_of`` /
                                                            ``price_source`` the period holds, counted from the
                                                            previous bar's last row (0: one series)
        ==================================================  =========================================================

        ``series_breaks`` is written when the frame has any of those columns; ``.fds.returns`` and
        ``.fds.forward_returns`` give no return across a bar whose count is above 0 or whose labels differ from
        the bar before, so the basis rule of history/SOURCES.md holds after a resample too. ``attrs["freq"]`` of
        the result is ``rule``: the return helpers read it as the calendar (a missing month is a hole, not a step).
        A period without rows has no bar.

        Args:
            rule: a pandas offset alias, e.g. ``"W-FRI"``, ``"ME"``, ``"QE"``.
            how: one aggregation (``first``, ``last``, ``max``, ``min``, ``sum``, ``mean``, ...) for every number
                column, or a mapping column -> aggregation; the other columns keep the rules above.

        Returns:
            The resampled long frame, same index names and column dtypes (and ``series_breaks``, ``Int64``).

        Raises:
            BadRequestError: a ``how`` naming a column the frame lacks.

        Example:
            >>> import fdkit
            >>> px = fdkit.prices("AAPL", start_date="2023-01-03", end_date="2023-03-31")
            >>> m = px.fds.resample("ME")
            >>> len(m), m.attrs["freq"], int(m["series_breaks"].sum())
            (3, 'ME', 0)
        """
        df = self._df
        date = _date_level(df)
        rules = {c: _default_rule(c, df[c]) for c in df.columns}
        if isinstance(how, dict):
            unknown = [c for c in how if c not in df.columns]
            if unknown:
                from fdkit.errors import BadRequestError

                raise BadRequestError(f"resample(how=...) names no column of the frame: {unknown}")
            rules.update(how)
        elif how is not None:
            rules.update({c: how for c in df.columns if c not in _LABELS and _is_number(df[c])})
        keys = (
            [pd.Grouper(level="ticker"), pd.Grouper(level=date, freq=rule)]
            if _has_ticker(df)
            else [pd.Grouper(level=date, freq=rule)]
        )
        labels = [c for c in ("basis", "adjusted_as_of", "price_source") if c in df.columns]
        work = df
        if labels:  # each row: does it start another series than the ticker's row before it?
            work = df.assign(**{CHANGES: _changes(df, labels)})
            rules[CHANGES] = "sum"
        by_basis = "basis" in df.columns and rules.get("basis") == "basis"
        if by_basis:  # as_traded(), on the column's own values (no text copy of every row)
            b = df["basis"]
            work = work.assign(
                _traded=(b.isna() | (b == "as_traded")).to_numpy(dtype=bool),
                _adjusted=(b == "adjusted_only").fillna(False).to_numpy(dtype=bool),
            )
        grouped = work.groupby(keys, observed=True)
        size = grouped.size()
        parts = {}
        for col, agg in rules.items():
            g = grouped[col]
            if agg in ("first", "last", "basis"):  # basis: the last row's, then its own rule below
                parts[col] = getattr(g, "last" if agg == "basis" else agg)(skipna=False)
            elif agg == "sum":
                parts[col] = g.sum(min_count=1)
            else:
                parts[col] = g.agg(agg)
        out = pd.DataFrame(parts, index=size.index)[size.to_numpy() > 0]
        out.index = out.index.set_names(["ticker", date] if _has_ticker(df) else [date])
        for col in ("volume", CHANGES):
            if col in out.columns and col in work.columns and str(work[col].dtype) == "Int64":
                out[col] = out[col].astype("Int64")
        if CHANGES in out.columns:
            out[CHANGES] = out[CHANGES].fillna(0).astype("Int64")
        if by_basis:  # a bar is as traded only if every bar it is made of is
            traded = grouped["_traded"].all().reindex(out.index).to_numpy(dtype=bool)
            adjusted = grouped["_adjusted"].any().reindex(out.index).to_numpy(dtype=bool)
            if how is None:
                prices = [c for c in ("open", "high", "low", "close") if c in out.columns]
                out.loc[adjusted, prices] = np.nan  # a day without an as-traded price: no bar price
            basis = out["basis"].copy()  # the last row's, where neither rule applies (price_only)
            if isinstance(basis.dtype, pd.CategoricalDtype):
                extra = [v for v in ("as_traded", "adjusted_only") if v not in basis.cat.categories]
                basis = basis.cat.add_categories(extra) if extra else basis
            basis[traded] = "as_traded"
            basis[~traded & adjusted] = "adjusted_only"
            out["basis"] = basis
        out.attrs = {**df.attrs, FREQ_ATTR: rule}
        return out

    def align(
        self, other: pd.DataFrame | pd.Series, join: Literal["outer", "inner", "left", "right"] = "inner"
    ) -> tuple[pd.DataFrame, Any]:
        """Align two long frames on their ``(ticker, date)`` index.

        Args:
            other: another frame or series with the same index names.
            join: ``inner``, ``outer``, ``left`` or ``right``.

        Returns:
            ``(self_aligned, other_aligned)``.

        Example:
            >>> import fdkit
            >>> px = fdkit.prices("AAPL", start_date="2023-01-03", end_date="2023-01-10")
            >>> a, b = px.fds.align(px.fds.returns().dropna())
            >>> len(a) == len(b)
            True
        """
        return self._df.align(other, join=join, axis=0)

    # -- ratios, screen, point in time ------------------------------------------------------------------
    def ratios(
        self,
        prices: pd.DataFrame | None = None,
        trailing: bool = False,
        growth: bool = False,
        lag: int = 1,
        families: list[str] | None = None,
        splits: pd.DataFrame | None = None,
    ) -> pd.DataFrame:
        """Financial ratios of a statement frame (e.g. from ``fdkit.financials``), per row, grouped by ticker.

        The formulas are those of the service's ``/financial-metrics`` (one implementation:
        :mod:`fdkit.research.ratios`).

        Args:
            prices: a price panel for the valuation family (close on or before each report period).
            trailing: first turn quarterly rows into trailing-twelve-month rows.
            growth: add the growth family (period over period).
            lag: periods back for growth.
            families: any of ``profitability, liquidity, solvency, efficiency, valuation, growth, per_share``
                (default: all that apply).
            splits: the split table used when ``prices`` say they are on another split basis than the statements
                (``attrs["split_basis"]``, see :mod:`fdkit.frames.basis`); default: ``fdkit.splits`` of the tickers. Raw
                prices from elsewhere, marked ``px.attrs["split_basis"] = "raw"``, give the same P/E as the
                service's adjusted ones.

        Returns:
            A frame of float64 ratios on the statement frame's index.

        Example:
            >>> import fdkit
            >>> r = fdkit.financials("AAPL", period="annual", limit=2).fds.ratios()
            >>> bool((r["gross_margin"] > 0.4).all())
            True
        """
        df = trailing_twelve_months(self._df) if trailing else self._df
        if families is None:
            families = [f for f in FAMILIES if f not in ("growth", "valuation")]
            if growth:
                families.append("growth")
            if prices is not None:
                families.append("valuation")
        unknown = [f for f in families if f not in FAMILIES]
        if unknown:
            from fdkit.errors import BadRequestError

            raise BadRequestError(f"unknown ratio families {unknown}; known: {', '.join(FAMILIES)}")
        if prices is not None:
            prices = _on_basis_of(self._df, prices, splits)
        out = compute_ratios(df, prices, growth=growth or "growth" in families, families=families, lag=lag)
        if FISCAL_PERIODS_ATTR in self._df.attrs:  # a screen's periods travel to the plot's title
            out.attrs[FISCAL_PERIODS_ATTR] = dict(self._df.attrs[FISCAL_PERIODS_ATTR])
        return out

    def adjust(
        self, to: str = "adjusted", splits: pd.DataFrame | None = None, *, source: str | None = None
    ) -> pd.DataFrame:
        """Move prices, per-share values and share counts to another split basis.

        Args:
            to: ``adjusted`` (every split the service lists), ``raw`` (as traded / as reported on the filing day)
                or an ISO date (the splits up to that day).
            splits: the split table (default: ``fdkit.splits`` of the frame's tickers).
            source: the frame's basis when it does not say (``attrs["split_basis"]``).

        Returns:
            A copy on the new basis (``attrs["split_basis"]`` set).

        Example:
            >>> import fdkit
            >>> px = fdkit.prices("NVDA", start_date="2021-07-16", end_date="2021-07-21")
            >>> px.fds.adjust("raw")["close"].round(2).tolist()  # as traded: the 4-for-1 split of 2021-07-20
            [726.44, 751.19, 186.12, 194.1]
        """
        return rebase(self._df, to, _split_table(self._df, splits), source=source)

    def forward_returns(
        self,
        horizons: Sequence[Period] = (1, 21),
        column: str | None = None,
        *,
        to_last_price: bool = False,
        freq: Freq = None,
        breaks: tuple[str, ...] | list[str] | None = None,
    ) -> pd.DataFrame:
        """Forward returns per ticker, ``fwd_<h>`` = price ``h`` ahead / price - 1 (:mod:`fdkit.research.factors`).

        A forward return never spans a change of series or a hole in the calendar (NaN there; the rules of
        :meth:`returns`).

        Args:
            horizons: rows ahead (ints: trading days of a daily panel, months of a monthly one) or calendar periods
                (``"1ME"``, ``"12ME"``, ``"21D"``: columns ``fwd_1ME`` ...).
            column: the price column (default: as :meth:`returns` chooses it; ``attrs["column"]`` says which).
            to_last_price: keep a ticker that stopped trading inside the panel until its last price (see
                :func:`fdkit.research.factors.forward_returns`).
            freq: the calendar's step (see :meth:`returns`).
            breaks: the columns whose change ends a series (see :meth:`returns`).

        Returns:
            One float64 column per horizon on the panel's index.

        Raises:
            BadRequestError: a frame that is no panel, a bad horizon, a column or break the frame lacks.

        Example:
            >>> import fdkit
            >>> px = fdkit.prices(["AAPL", "MSFT"], start_date="2023-01-03", end_date="2023-03-31")
            >>> px.fds.forward_returns([1, 5]).columns.tolist()
            ['fwd_1', 'fwd_5']
        """
        name = price_column(self._df, column)
        if column is not None:
            _say_if_mostly_missing(self._df, name, "forward_returns")
        return _factors.forward_returns(self._df, horizons, name, to_last_price=to_last_price, freq=freq, breaks=breaks)

    def rank_ic(
        self, factor: str, forward: str | list[str], *, summary: bool = False, min_dates: int = 12, min_names: int = 10
    ) -> pd.DataFrame:
        """Per-date Spearman rank IC of a factor column with forward-return columns (see :mod:`fdkit.research.factors`).

        Args:
            factor: the factor column.
            forward: one forward-return column or several (the IC decay across horizons).
            summary: return the summary per horizon instead of the per-date ICs: mean, std, a Newey-West t-statistic
                with ``horizon - 1`` lags (overlapping horizons are not independent), dates, names per date.
            min_dates: with ``summary``, the fewest dates a t-statistic is reported for (else NaN, with a warning).
            min_names: with ``summary``, the fewest names a date (on average) a t-statistic is reported for.

        Returns:
            ICs by date (one column per horizon), or their summary.

        Example:
            >>> import fdkit, warnings
            >>> px = fdkit.prices(["AAPL", "MSFT", "NVDA", "GOOGL"], start_date="2023-01-03", end_date="2023-06-30")
            >>> panel = px.join(px.fds.forward_returns([5])).assign(mom=px.fds.returns(periods=20))
            >>> with warnings.catch_warnings(record=True) as w:  # four names a date: no t-statistic, and a warning
            ...     s = panel.fds.rank_ic("mom", "fwd_5", summary=True)
            >>> s.columns.tolist(), bool(s["t_stat"].isna().all()), len(w)
            (['mean', 'std', 't_stat', 'n', 'nw_lags', 'names_mean', 'names_min'], True, 1)
        """
        ic = _factors.rank_ic(self._df, factor, forward)
        if not summary:
            return ic
        names = _factors.ic_breadth(self._df, factor, forward)
        return _factors.ic_summary(ic, names=names, min_dates=min_dates, min_names=min_names)

    def quantiles(self, factor: str, n: int = 5) -> pd.Series:
        """Per-date quantile of a factor column, 1 (lowest) .. ``n`` (highest) (see :mod:`fdkit.research.factors`).

        Args:
            factor: the factor column.
            n: the number of buckets.

        Returns:
            An ``Int64`` series on the panel's index.

        Example:
            >>> import fdkit
            >>> px = fdkit.prices(["AAPL", "MSFT", "NVDA", "GOOGL"], start_date="2023-01-03", end_date="2023-01-31")
            >>> sorted(px.fds.quantiles("close", n=2).dropna().unique().tolist())
            [1, 2]
        """
        return _factors.quantiles(self._df, factor, n)

    def total_return(self, dividends: pd.DataFrame | None = None) -> pd.DataFrame:
        """A copy with ``tr_close``: the close with every distribution it does not carry put back.

        The day's return of ``tr_close`` is ``(close + distributions going ex) / previous close`` (cash dividends,
        specials, a spin-off's shares: EBAY on 2015-07-20 returns +1%, not -57%); each ticker's last ``tr_close``
        equals its close. Distributions the service marks ``in_prices`` (the closes already carry them) are not
        added again (:func:`fdkit.research.returns.total_return_close`).

        Args:
            dividends: the distributions (``ticker``, ``date``, ``dividend``, ``in_prices``); default:
                ``fdkit.dividends`` of the frame's tickers, on the frame's split basis.

        Returns:
            The frame with a float64 ``tr_close`` column.

        Example:
            >>> import fdkit
            >>> px = fdkit.prices("EBAY", start_date="2015-07-15", end_date="2015-07-21")
            >>> tr = px.fds.total_return()
            >>> tr["close"].pct_change().round(3).tolist()[3], tr["tr_close"].pct_change().round(3).tolist()[3]
            (-0.569, 0.01)
        """
        if dividends is None:
            tickers = sorted({str(t) for t in self._df.index.get_level_values("ticker")})
            from fdkit.api import dividends as fetch_dividends  # noqa: PLC0415 - fetched only when not given

            fetched = fetch_dividends(tickers, limit=None, errors="ignore")
            want, have = basis_of(self._df), basis_of(fetched)
            if want is not None and have is not None and want != have:  # e.g. prices moved to the raw basis
                fetched = rebase(fetched, want, _split_table(self._df, None), source=have)
            dividends = fetched.reset_index()
        elif "ticker" not in dividends.columns:
            dividends = dividends.reset_index()
        out = self._df.copy()
        out["tr_close"] = total_return_close(self._df, dividends)
        return out

    def turnover(self, factor: str, n: int = 5) -> pd.DataFrame:
        """Per date, the share of each factor quantile's names that are new since the previous date.

        Args:
            factor: the factor column.
            n: the number of quantiles.

        Returns:
            Columns ``q1`` .. ``qn`` indexed by date (see :func:`fdkit.research.factors.quantile_turnover`).

        Example:
            >>> import fdkit
            >>> px = fdkit.prices(["AAPL", "MSFT", "NVDA", "GOOGL"], start_date="2023-01-03", end_date="2023-06-30")
            >>> m = px.fds.resample("ME").assign(mom=lambda d: d.fds.returns(periods=1))
            >>> m.fds.turnover("mom", n=2).columns.tolist()
            ['q1', 'q2']
        """
        return _factors.quantile_turnover(self._df, factor, n)

    def quantile_returns(self, factor: str, forward: str, n: int = 5, *, cumulative: bool = False) -> pd.DataFrame:
        """Mean forward return per date of each factor quantile and the long-short spread (see ``research.factors``).

        Args:
            factor: the factor column.
            forward: the forward-return column.
            n: the number of quantiles.
            cumulative: compound over the dates (growth of 1).

        Returns:
            Columns ``q1`` .. ``qn`` and ``long_short``, indexed by date.

        Example:
            >>> import fdkit
            >>> px = fdkit.prices(["AAPL", "MSFT", "NVDA", "GOOGL"], start_date="2023-01-03", end_date="2023-03-31")
            >>> panel = px.join(px.fds.forward_returns([5])).assign(mom=px.fds.returns(periods=20))
            >>> panel.fds.quantile_returns("mom", "fwd_5", n=2).columns.tolist()
            ['q1', 'q2', 'long_short']
        """
        return _factors.quantile_returns(self._df, factor, forward, n, cumulative=cumulative)

    def screen(
        self, filters: list[dict[str, Any]] | None = None, *, fiscal_period: str | None = None, **kwargs: Any
    ) -> pd.DataFrame:
        """Keep the rows passing every filter (AND), sorted by ticker: the service screener's semantics.

        A screen compares companies on one fiscal period: ``fiscal_period="FY2016"`` keeps that period's rows
        first. Without it (the service's screener: each company's latest period), the fiscal periods of the rows
        kept are counted in ``attrs["fiscal_periods"]`` and named in the title of ``.fds.ratios().fds.plot()``,
        so a comparison of FY2016 with FY2025 says so.

        Args:
            filters: ``[{field, operator eq|gt|gte|lt|lte|in, value}]``.
            fiscal_period: compare only the rows of this fiscal period (``FY2016``, ``Q3 2024``: the frame's
                ``fiscal_period`` values).
            **kwargs: the keyword form, e.g. ``revenue__gt=1e11``, ``ticker=["AAPL", "NVDA"]``.

        Returns:
            The matching rows.

        Raises:
            BadRequestError: naming an unknown field or operator or a bad value, or a fiscal period the frame
                does not have (naming those it has).

        Example:
            >>> import fdkit
            >>> f = fdkit.financials(["AAPL", "NVDA", "MSFT"], period="annual", limit=None)
            >>> big = f.fds.screen(revenue__gt=5e10, fiscal_period="FY2016")
            >>> big.index.get_level_values("ticker").tolist(), big.attrs["fiscal_periods"]
            (['AAPL', 'MSFT'], {'FY2016': 2})
        """
        df = self._df
        if fiscal_period is not None:
            df = _one_fiscal_period(df, fiscal_period)
        all_filters = list(filters or []) + filters_from_kwargs(**kwargs)
        out = apply_filters(df, all_filters)
        if "fiscal_period" in out.columns:
            counts = out["fiscal_period"].astype("string").value_counts(dropna=True).sort_index()
            out.attrs[FISCAL_PERIODS_ATTR] = {str(k): int(v) for k, v in counts.items()}
        return out

    def asof(
        self,
        prices: pd.DataFrame,
        lag_days: int | None = None,
        *,
        lag: str | pd.Timedelta | None = None,
        max_age: str | pd.Timedelta | None = None,
    ) -> pd.DataFrame:
        """Attach to each price row the latest statement known by that row's date (point in time).

        When a statement counts as known (its ``available_from`` date; a bar on or after it may use it):

        * by default (``lag=None``), a row carrying the SEC's acceptance time (``filing_datetime``) is known at
          the close of the day it was accepted if that was a weekday before 16:00 Eastern, else from the next
          day; a row with only a ``filing_date`` (no time of day: an after-close filing would be look-ahead on
          its filing day) from the day after it;
        * with an explicit ``lag`` (e.g. ``"0D"``, ``"2D"``), from ``filing_date + lag`` for every row.

        The filing times travel with the frame: a frame fdkit returned keeps them after columns are selected
        (``ttm[["margin"]].fds.asof(px)`` uses the same dates as ``ttm.fds.asof(px)``; see
        :mod:`fdkit.frames.pointintime`). There is no silent fallback: a row whose filing date is not known is
        dated ``report_period + lag_days`` only when ``lag_days`` is given; without it such rows are left out
        (with a warning), and a frame that knows no filing date at all is refused.

        Args:
            prices: a long price frame indexed ``(ticker, time)``.
            lag_days: the explicit fallback for rows without a filing date: known ``lag_days`` after their report
                period (e.g. 45 for 10-Qs, 90 for 10-Ks); ``None`` (default) uses no fallback.
            lag: added to every filing date instead of the default rule above.
            max_age: a statement known for longer than this (e.g. ``"400D"``) is not carried forward: its fields
                are missing instead of stale.

        Returns:
            The price frame with the statement's columns added (``report_period`` and ``available_from`` too);
            rows before a ticker's first filing, or past ``max_age``, have missing statement fields.

        Raises:
            ValueError: the frame has no ``report_period``, or knows no filing date and ``lag_days`` is not given.

        Example:
            >>> import fdkit
            >>> st = fdkit.income_statements("AAPL", period="quarterly", report_period_lte="2023-04-01", limit=4)
            >>> px = fdkit.prices("AAPL", start_date="2023-06-05", end_date="2023-06-09")
            >>> j = st[["revenue"]].fds.asof(px)  # the filing dates travel with the selected column
            >>> bool((j["available_from"] <= j.index.get_level_values("time")).all())
            True
        """
        times = filing_times(self._df)
        st = self._df.reset_index()
        if "report_period" not in st.columns:
            raise ValueError("asof needs a statement frame with a report_period")
        if times is None and lag_days is None:
            raise ValueError(
                "asof: this frame knows no filing dates (they were dropped, e.g. by a concat of frames or a frame "
                "made by hand), so when each row became known is unknown: keep 'filing_date' among the columns, or "
                "pass lag_days=N to date each row N days after its report period"
            )
        st = st.drop(columns=[c for c in ("filing_date", "filing_datetime") if c in st.columns])
        rp = pd.to_datetime(st["report_period"])
        filed = pd.to_datetime(times["filing_date"]) if times is not None else pd.Series(pd.NaT, index=st.index)
        if lag is not None:
            known = filed + pd.Timedelta(lag)
        else:
            known = filed + pd.Timedelta(days=1)
            if times is not None and "filing_datetime" in times.columns:
                known = known_from(times["filing_datetime"]).fillna(known)
        if lag_days is not None:
            known = known.fillna(rp + pd.Timedelta(days=lag_days))
        elif known.isna().any():
            warnings.warn(
                f"asof: {int(known.isna().sum())} statement rows have no filing date and are left out "
                "(pass lag_days=N to date them N days after their report period)",
                stacklevel=2,
            )
        if times is not None:
            for c in times.columns:
                st[c] = times[c].to_numpy()
        st["available_from"] = known.astype("datetime64[ns]")
        st = st[st["available_from"].notna().to_numpy()]
        st["ticker"] = st["ticker"].astype(str)
        st = st.sort_values(["available_from", "report_period"], kind="stable")
        st = st.drop(columns=["time"], errors="ignore")
        px = prices.reset_index()
        date = "time" if "time" in px.columns else _date_level(prices)
        px["_order"] = np.arange(len(px))
        px["ticker"] = px["ticker"].astype(str)
        t = pd.to_datetime(px[date])
        px["_t"] = (t.dt.tz_convert(None) if t.dt.tz is not None else t).astype("datetime64[ns]")
        px = px.sort_values("_t", kind="stable")
        overlap = [c for c in st.columns if c in px.columns and c not in ("ticker",)]
        right = st.rename(columns={c: f"{c}_statement" for c in overlap})
        merged = pd.merge_asof(px, right, left_on="_t", right_on="available_from", by="ticker", direction="backward")
        if max_age is not None:  # too old to carry forward: missing, not stale
            stale = (merged["_t"] - merged["available_from"]) > pd.Timedelta(max_age)
            for c in [c for c in right.columns if c != "ticker"]:
                merged[c] = merged[c].mask(stale)
        merged = merged.sort_values("_order").drop(columns=["_order", "_t"])
        merged["ticker"] = pd.Categorical(merged["ticker"])
        return merged.set_index(list(prices.index.names))

    # -- plots --------------------------------------------------------------------------------------------
    def plot(self, kind: str = "auto", column: str | None = None, ax: Any = None, **kwargs: Any) -> Any:
        """Plot the frame with matplotlib and return the Axes.

        Args:
            kind: ``prices`` (lines per ticker; ``rebase=100`` for performance), ``statement`` (a column over
                report periods per ticker), ``segments`` (stacked bars of segment amounts), ``ratios`` (bars
                comparing tickers on the latest row), ``ic`` (per-date rank IC of ``rank_ic``), ``quantiles``
                (growth of 1 per quantile, from ``quantile_returns``; ``log=True`` for a log axis), ``event``
                (abnormal returns of ``fdkit.event_study``), or ``auto`` (chosen from the columns). Axes are
                labelled in words, legends say which quantile holds the high factor values.
            column: the column to draw (``close`` for prices; required for statements).
            ax: an existing Axes.
            **kwargs: passed to the plot function (``rebase=``, ``order=`` and ``title=`` for prices).

        Returns:
            The matplotlib Axes.

        Example:
            >>> import fdkit, matplotlib
            >>> matplotlib.use("Agg")
            >>> ax = fdkit.prices("AAPL", start_date="2023-01-03", end_date="2023-02-01").fds.plot()
            >>> ax.get_ylabel()
            'close price'
        """
        df = self._df
        if kind == "auto":
            if "car" in df.columns and "mean_ar" in df.columns:
                kind = "event"
            elif "long_short" in df.columns:
                kind = "quantiles"
            elif "segment_label" in df.columns:
                kind = "segments"
            elif "close" in df.columns:
                kind = "prices"
            elif "report_period" in (df.index.names or []) and column is not None:
                kind = "statement"
            else:
                kind = "ratios"
        if kind == "prices":
            return _plot.price_lines(df, column or "close", ax=ax, **kwargs)
        if kind == "statement":
            if column is None:
                raise ValueError("plot(kind='statement') needs column=")
            return _plot.statement_lines(df, column, ax=ax, **kwargs)
        if kind == "segments":
            return _plot.segment_bars(df, ax=ax, **kwargs)
        if kind == "ratios":
            return _plot.ratio_bars(df, [column] if column else None, ax=ax, **kwargs)
        if kind == "ic":
            return _plot.ic_bars(df if column is None else df[[column]], ax=ax, **kwargs)
        if kind == "quantiles":
            return _plot.quantile_lines(df, ax=ax, **kwargs)
        if kind == "event":
            return _plot.event_lines(df, ax=ax, **kwargs)
        raise ValueError(
            f"unknown plot kind {kind!r}; use prices, statement, segments, ratios, ic, quantiles, event or auto"
        )
