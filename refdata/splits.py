"""The split table: one row per (ticker, ex-date), the ratio of new to old shares, from four sources in turn.

The community split table (distribution date -> the next trading day is the ex-date, unless its note states
it), LEAN factor files (a change of split factor), the raw/adjusted close pairs of the pystock prices (the day
before an event its adjusted close carries the event's price factor; a factor within 1% of q/p, p and q at most
10, is a p-for-q split; other factors are dividends or spin-offs, not splits), and the filings' share counts
(:func:`share_count_splits`: HLT's 1-for-3, which no table holds). Only splits on or before the price basis date
are kept: everything in the lake is on the share basis of that day.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction

import numpy as np
import pandas as pd

from refdata.common import BASIS_DATE, PYSTOCK, R2, YAHOO, norm_ticker, tuples, wanted_tickers
from refdata.pystock import REPORTS, parent_filer_only, read_reports
from refdata.pystock_identity import relabel
from refdata.sp500_bars import DAILY as SP500_DAILY
from refdata.sp500_bars import SPLITS as SP500_SPLITS
from refdata.sp500_bars import missing_share_splits
from refdata.stage import Context, Provenance, Stage, dataset

SPLIT_TABLE = "data-real-2/corporate_actions/stock_splits_2015_2026_coffee-cpu.csv"
LEAN_FACTORS = "data-real/prices/lean_factor_files.csv"


def nice_ratio(x: float, tolerance: float = 0.03) -> Fraction | None:
    """The split ratio p/q (p, q at most 10, not 1) within ``tolerance`` of ``x``, or ``None``.

    Args:
        x: a factor.
        tolerance: the largest relative distance.

    Returns:
        The fraction, or ``None`` where no small ratio is that close.

    Example:
        >>> nice_ratio(1.4999), nice_ratio(1.37), nice_ratio(1.0)
        (Fraction(3, 2), None, None)
    """
    if not np.isfinite(x) or x <= 0:
        return None
    f = Fraction(x).limit_denominator(10)
    if f.numerator <= 10 and f != 1 and abs(float(f) - x) <= tolerance * x:
        return f
    return None


def trading_day_after(calendar: pd.DatetimeIndex) -> Callable[[pd.Timestamp], pd.Timestamp]:
    """The function giving the first trading day after a day (a business day outside the calendar's span).

    Args:
        calendar: trading days, sorted, tz-naive.

    Returns:
        ``day -> next trading day``.

    Example:
        >>> nxt = trading_day_after(pd.DatetimeIndex(["2024-01-02", "2024-01-03", "2024-01-05"]))
        >>> nxt(pd.Timestamp("2024-01-03")), nxt(pd.Timestamp("2024-01-05"))
        (Timestamp('2024-01-05 00:00:00'), Timestamp('2024-01-08 00:00:00'))
    """

    def next_trading_day(day: pd.Timestamp) -> pd.Timestamp:
        pos = calendar.searchsorted(day, side="right")
        if day < calendar[0] or pos >= len(calendar):
            return day + pd.offsets.BDay(1)
        return calendar[int(pos)]

    return next_trading_day


#: how the split table's notes state the first day traded on the new basis, most explicit first
_EX_DATE_STATEMENTS = (
    r"[Ss]plit-adjusted (?:[A-Za-z]+ )?trading (?:on [A-Za-z]+ )?(?:began|begins|commenced|started)",
    r"[Ee]x-(?:distribution )?date\)?:?",
    r"[Cc]onsolidated shares began trading",
    r"began trading on a split-adjusted basis(?: on)?",
    r"trading on (?:a )?split-adjusted basis began",
    r"ADR split effective",
    r"[Mm]arketplace effective date",
    # a split effective before the open (12:01 AM .. 9:29 AM, "at opening of trading", "at market open") trades on
    # the new basis that very day
    r"[Ee]ffective (?:at )?(?:12:0\d|[1-8]:\d\d|9:[0-2]\d) AM [A-Z]{2,3}",
    r"[Ee]ffective at (?:the )?opening of trading",
    r"[Ee]ffective(?=\s+[A-Z][a-z]{2,8}\.? \d{1,2},? \d{4}\.\s+Trading[^.]*basis at market open)",
)
_NOTE_DAY = r"\s*(?:on\s+)?([A-Z][a-z]{2,8}\.? \d{1,2},? \d{4})"


def stated_ex_date(note: str | float | None) -> pd.Timestamp | None:
    """The ex-date a split table note states (the first day traded on the new basis), or ``None``.

    The table's ``date`` is documented as the distribution date, but for a third of the notes that state the
    first split-adjusted session (37 of 120) the ``date`` is already that session (TSLA 2020-08-31, NVDA
    2021-07-20): the note is the better witness.

    Args:
        note: the row's ``notes`` text (may be missing).

    Returns:
        The stated day, or ``None`` where the note states none.

    Example:
        >>> stated_ex_date("Record date Aug 21, 2020. Split-adjusted trading began Aug 31, 2020.")
        Timestamp('2020-08-31 00:00:00')
        >>> stated_ex_date("Class C shares distributed Apr 7, 2016 (ex-date Apr 8, 2016).")
        Timestamp('2016-04-08 00:00:00')
        >>> stated_ex_date("Effective at 12:01 AM EST May 6, 2024. CUSIP changed.")
        Timestamp('2024-05-06 00:00:00')
        >>> stated_ex_date("Effective May 11, 2020. Trading on NYSE began on post-consolidation basis at market open.")
        Timestamp('2020-05-11 00:00:00')
        >>> stated_ex_date("Effective at 5:00 PM ET Feb 16, 2024.") is None  # after the close: the next session
        True
        >>> stated_ex_date("Payable on or about Jan 30, 2015.") is None
        True
    """
    if not isinstance(note, str):
        return None
    for statement in _EX_DATE_STATEMENTS:
        m = re.search(statement + _NOTE_DAY, note)
        if m:
            day = pd.to_datetime(m.group(1).replace(".", "").replace(",", ""), format="%b %d %Y", errors="coerce")
            if pd.isna(day):
                day = pd.to_datetime(m.group(1).replace(",", ""), format="%B %d %Y", errors="coerce")
            if not pd.isna(day):
                return pd.Timestamp(day)
    return None


def _table_splits(cs: pd.DataFrame, next_day: Callable[[pd.Timestamp], pd.Timestamp]) -> list[dict]:
    """The community split table: the ex-date its note states, else the trading day after its distribution date."""
    rows = []
    for r in tuples(cs):
        stated = stated_ex_date(getattr(r, "notes", None))
        ex, how = (
            (stated, "ex-date stated in its note")
            if stated is not None
            else (next_day(r.date), "ex-date = the trading day after the distribution date")
        )
        rows.append(
            {
                "ticker": r.symbol,
                "date": ex,
                "ratio": float(r.ratioNew) / float(r.ratioOld),
                "source": f"split table (coffee-cpu; {how})",
            }
        )
    return rows


def _lean_splits(lean: pd.DataFrame, next_day: Callable[[pd.Timestamp], pd.Timestamp]) -> list[dict]:
    """LEAN factor files: a change of split factor is a split the next trading day."""
    rows = []
    for t, g in lean.sort_values(["ticker", "date"]).groupby("ticker"):
        f = g["split_factor"].to_numpy()
        for i in range(len(g) - 1):
            if f[i + 1] != f[i] and g["date"].iloc[i] < BASIS_DATE:
                ex = next_day(g["date"].iloc[i])
                ratio = nice_ratio(f[i + 1] / f[i])
                if ratio is not None:
                    rows.append(
                        {
                            "ticker": {"FB": "META"}.get(str(t), t),
                            "date": ex,
                            "ratio": float(ratio),
                            "source": "LEAN factor file",
                        }
                    )
    return rows


def _close_pair_splits(raw: pd.DataFrame, reports: pd.DataFrame | None = None) -> list[dict]:
    """Splits read from the pystock close pairs.

    A crawl adjusted the closes of the days before it for the events up to the crawl, and each day kept its
    latest crawl: around an event, adj_close / close is the event's price factor (1/n for an n-for-1 split) on
    the day or two before it. The ex-date is the day within three of that whose raw close moves by the ratio.
    A factor above 1 is a reverse split's (dividends and spin-offs lower the adjusted close): a whole factor over
    10 is a 1-for-n split too. A spin-off the crawl carried as a split (Graham Holdings' Cable One, 2015-07-01, as
    5-for-3; SPX's SPX Flow, 2015-09-28, as 4-for-1) is refuted by the share count and the volume
    (:func:`refuted_split`), and left to the distributions.
    """
    counts = _share_counts(reports, _ROUGH_NET_INCOME, _ROUGH_EPS) if reports is not None else None
    rows = []
    raw = raw.sort_values(["ticker", "date"]).reset_index(drop=True)
    factor = raw["adj_close"] / raw["close"]
    move = raw.groupby("ticker")["close"].shift() / raw["close"]  # the raw close's drop into each day
    jump = factor.notna() & ((factor < 0.7) | (factor > 1.4))
    for i in np.flatnonzero(jump.to_numpy()):
        ratio = nice_ratio(1.0 / float(factor.iloc[i]), tolerance=0.01)  # a spin-off's factor is seldom that close
        whole, fits = round(float(factor.iloc[i])), 0.1
        if ratio is None and whole > 10 and abs(float(factor.iloc[i]) / whole - 1) <= 0.01:
            # only a reverse split lifts the adjusted close: 1-for-15 (BTU 2015-10-01, a distressed stock whose
            # close moved 14% more that day: a day's move within the lake's +/-25% is left to the close)
            ratio, fits = Fraction(1, whole), 0.25
        if ratio is None:
            continue
        near = raw.index[(raw.index >= i - 3) & (raw.index <= i + 3) & (raw["ticker"] == raw["ticker"].iloc[i])]
        fit = (move.loc[near] / float(ratio) - 1).abs()
        if fit.notna().any() and fit.min() < fits:
            j = fit.idxmin()
            ticker = str(raw["ticker"].iloc[j])
            mine = None if counts is None else counts[counts["ticker"] == ticker]
            if refuted_split(mine, raw[raw["ticker"] == ticker], raw["date"].iloc[j], float(ratio)):
                continue
            rows.append(
                {
                    "ticker": raw["ticker"].iloc[j],
                    "date": raw["date"].iloc[j],
                    "ratio": float(ratio),
                    "source": "raw vs adjusted close (pystock prices)",
                }
            )
    return rows


#: a filing's share count (net income / EPS) is read only where both are this large: EPS is given to the cent
_MIN_NET_INCOME = 50e6
_MIN_EPS = 0.15
#: sessions of volume compared on each side of a split's ex-date
_VOLUME_SESSIONS = 20


#: ... and, to refute a split (a step of 1, not a ratio to the cent, is what it asks), where both are this large
_ROUGH_NET_INCOME = 5e6
_ROUGH_EPS = 0.05


def _share_counts(
    reports: pd.DataFrame, min_income: float = _MIN_NET_INCOME, min_eps: float = _MIN_EPS
) -> pd.DataFrame:
    """Each readable filing's share count (net income / diluted, else basic, EPS) by the day it was first seen."""
    eps = reports["eps_diluted"].fillna(reports["eps_basic"])
    readable = (
        ~reports["amend"].astype(bool)
        & (reports["net_income"].abs() >= min_income)
        & (eps.abs() >= min_eps)
        & (np.sign(eps) == np.sign(reports["net_income"]))
    )
    return reports[readable].assign(shares=reports["net_income"] / eps).sort_values(["ticker", "first_seen_date"])


def refuted_split(counts: pd.DataFrame | None, bars: pd.DataFrame, day: pd.Timestamp, ratio: float) -> bool:
    """Whether a split of ``ratio`` on ``day`` is refuted: the shares did not step by it.

    A split multiplies the share count by its ratio, and the daily volume with it. The filings' share counts (the
    last seen before ``day`` and the first seen after) decide where both are readable; else the median volume of
    the 20 sessions from ``day`` against the 20 before. The split is refuted when that step is nearer to 1 than to
    the ratio (in logs).

    Args:
        counts: one ticker's filings' share counts (``first_seen_date``, ``shares``), or ``None``.
        bars: that ticker's raw bars (``date``, ``volume``).
        day: the ex-date.
        ratio: new shares per old share.

    Returns:
        ``True`` when the evidence says no split.

    Example:
        >>> counts = pd.DataFrame({"first_seen_date": pd.to_datetime(["2015-05-01", "2015-08-01"]),
        ...                        "shares": [5.9e6, 5.7e6]})
        >>> bars = pd.DataFrame({"date": pd.bdate_range("2015-06-01", periods=40), "volume": 40_000})
        >>> refuted_split(counts, bars, pd.Timestamp("2015-07-01"), 5 / 3), refuted_split(None, bars.assign(
        ...     volume=[40_000] * 22 + [120_000] * 18), pd.Timestamp("2015-07-01"), 3.0)
        (True, False)
    """
    step = None
    if counts is not None and len(counts):
        before = counts.loc[counts["first_seen_date"] < day, "shares"]
        after = counts.loc[counts["first_seen_date"] >= day, "shares"]
        if len(before) and len(after):
            step = float(after.iloc[0]) / float(before.iloc[-1])
    if step is None and "volume" in bars.columns:
        bars = bars.sort_values("date")
        pre = bars.loc[bars["date"] < day, "volume"].tail(_VOLUME_SESSIONS).median()
        post = bars.loc[bars["date"] >= day, "volume"].head(_VOLUME_SESSIONS).median()
        if pre > 0 and post > 0:
            step = float(post) / float(pre)
    if step is None or step <= 0:
        return False  # nothing says otherwise: the close pair stands
    return bool(abs(np.log(step)) < abs(np.log(step / ratio)))


def share_count_splits(reports: pd.DataFrame, raw: pd.DataFrame) -> list[dict]:
    """Splits the filings' share counts show, dated by the raw close (none of the split tables has HLT's).

    A filing's share count is its net income over its diluted (else basic) EPS. Where two successive filings'
    counts differ by a small ratio r (within 5%: EPS is rounded to the cent; never between 0.7 and 1.4) and, between
    their first sightings, one day's raw close moves by 1/r times at most a distribution's factor (0.5 .. 1.1: a
    spin-off may go ex with the split), that day is the ex-date of an r split. Hilton's 1-for-3 of 2017-01-04, with
    the Park Hotels and Hilton Grand Vacations spin-offs: 988.7m shares (FY2015: 1,404m / 1.42), 984.2m (Q3 2016),
    331.4m (FY2016, filed after it: 348m / 1.05); the close went 27.39 -> 58.00 (x2.12 = 3 x 0.71).

    Args:
        reports: filing sightings (``ticker``, ``first_seen_date``, ``amend``, ``net_income``, ``eps_diluted``,
            ``eps_basic``), relabelled to the lake's tickers.
        raw: raw daily closes (``ticker``, ``date``, ``close``).

    Returns:
        Split rows (``ticker``, ``date``, ``ratio``, ``source``).

    Example:
        >>> reports = pd.DataFrame({"ticker": ["HLT"] * 2, "amend": False, "net_income": [187e6, 348e6],
        ...     "eps_diluted": [0.19, 1.05], "eps_basic": [0.19, 1.06],
        ...     "first_seen_date": pd.to_datetime(["2016-10-26", "2017-02-15"])})
        >>> raw = pd.DataFrame({"ticker": ["HLT"] * 3, "date": pd.to_datetime(["2017-01-03", "2017-01-04",
        ...                     "2017-01-05"]), "close": [27.39, 58.0, 57.32]})
        >>> [(r["date"].date().isoformat(), round(r["ratio"], 4)) for r in share_count_splits(reports, raw)]
        [('2017-01-04', 0.3333)]
    """
    r = _share_counts(reports)
    closes = {str(t): g.sort_values("date") for t, g in raw.groupby("ticker")}
    rows = []
    for ticker, g in r.groupby("ticker"):
        bars = closes.get(str(ticker))
        if bars is None:
            continue
        shares, seen = g["shares"].to_numpy(), g["first_seen_date"].to_numpy()
        move = (bars["close"] / bars["close"].shift()).to_numpy()
        days = bars["date"].to_numpy()
        for i in range(len(g) - 1):
            q = shares[i + 1] / shares[i]
            ratio = nice_ratio(q, tolerance=0.05)
            if ratio is None or 0.7 < q < 1.4:
                continue
            inside = (days > seen[i]) & (days <= seen[i + 1]) & np.isfinite(move)
            fit = move * float(ratio)
            hit = np.flatnonzero(inside & (fit > 0.5) & (fit < 1.1) & (np.abs(np.log(move)) > 0.25))
            if len(hit):
                j = hit[np.argmax(np.abs(np.log(move[hit])))]
                rows.append(
                    {
                        "ticker": ticker,
                        "date": pd.Timestamp(days[j]),
                        "ratio": float(ratio),
                        "source": "filings' share counts (net income / EPS), raw close (pystock)",
                    }
                )
    return rows


def build_splits(
    cs: pd.DataFrame,
    lean: pd.DataFrame,
    calendar: pd.DatetimeIndex,
    raw: pd.DataFrame,
    reports: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The split table: ticker, date (ex-date), ratio (new shares per old share), source.

    One split per (ticker, ex-date within 5 days): the first source in precedence order wins (split table, LEAN,
    close pairs, share counts); only splits up to :data:`~refdata.common.BASIS_DATE`.

    Args:
        cs: the community split table (``symbol``, ``date``, ``ratioNew``, ``ratioOld``).
        lean: LEAN factor files (``ticker``, ``date`` as a day, ``split_factor``).
        calendar: trading days (sorted, tz-naive) to find the ex-date after a distribution date.
        raw: raw daily closes with Yahoo adjusted closes (``ticker``, ``date``, ``close``, ``adj_close``).
        reports: filing sightings for :func:`share_count_splits` (none: not read).

    Returns:
        The split table, sorted by ticker and ex-date.
    """
    next_day = trading_day_after(calendar)
    rows = _table_splits(cs, next_day) + _lean_splits(lean, next_day) + _close_pair_splits(raw, reports)
    if reports is not None:
        rows += share_count_splits(reports, raw)
    df = pd.DataFrame(rows)
    df["ticker"] = norm_ticker(df["ticker"])
    df = df[df["date"] <= BASIS_DATE]
    df = df.reset_index(drop=True).reset_index(names="order").sort_values(["ticker", "date", "order"])
    keep = []
    last: dict[str, pd.Timestamp] = {}
    for r in tuples(df):
        if r.ticker in last and (r.date - last[r.ticker]).days <= 5:
            continue
        last[r.ticker] = r.date
        keep.append(r.order)
    out = df.set_index("order").loc[keep].sort_values(["ticker", "date"]).reset_index(drop=True)
    return out[["ticker", "date", "ratio", "source"]]


def _splits(ctx: Context) -> dict[str, pd.DataFrame]:
    cs = pd.read_csv(ctx.source(SPLIT_TABLE), parse_dates=["date"])
    lean = pd.read_csv(ctx.source(LEAN_FACTORS), dtype={"date": str})
    lean["date"] = pd.to_datetime(lean["date"], format="%Y%m%d")
    daily, raw = ctx["prices_main_2023"], ctx["pystock_prices"]
    calendar = pd.DatetimeIndex(sorted(set(daily["time"].dt.tz_localize(None)) | set(raw["date"])))
    wanted = wanted_tickers(ctx["pystock_owners"], daily)
    reports = read_reports(ctx.source(REPORTS))
    reports = relabel(reports.assign(ticker=norm_ticker(reports["symbol"])), ctx["pystock_owners"], "first_seen_date")
    reports = parent_filer_only(reports[reports["ticker"].isin(wanted)])
    table = build_splits(cs, lean, calendar, raw[raw["ticker"].isin(wanted)], reports)
    # the share splits of the S&P 500 of 2026 the sources above miss (APH 2021, TJX 2018, SHW 2021, ...)
    prints = pd.read_parquet(ctx.source(SP500_DAILY), columns=["ticker", "date", "close_as_traded"])
    prints["date"] = pd.to_datetime(prints["date"])
    more = missing_share_splits(pd.read_csv(ctx.source(SP500_SPLITS)), table, prints, raw)
    out = pd.concat([table, more], ignore_index=True).sort_values(["ticker", "date"], kind="stable")
    return {"splits": out.reset_index(drop=True)}


_PROVENANCE_SPLITS = Provenance(
    f"{R2}corporate_actions/stock_splits_2015_2026_coffee-cpu.csv; prices/lean_factor_files.csv; the raw and "
    f"adjusted closes of {R2}prices/pystock_us_equities_daily_2015_2017.parquet",
    "MIT (split table); Apache-2.0 (LEAN); " + PYSTOCK + "; data-real-6 split file: " + YAHOO,
    "one row per (ticker, ex-date): ratio = new shares per old share. Precedence: the split table (the ex-date its "
    "note states, 'split-adjusted trading began ...' or 'ex-date ...', for 120 of its 136 rows; otherwise its "
    "date is the distribution date and the ex-date the next trading day), LEAN factor files (a change of split "
    "factor), then the pystock close pairs (around an event the crawl's adjusted close carries the event's "
    "price factor; a factor within 1% of q/p with p, q <= 10 is a p-for-q split, dated by the day the raw "
    "close moves by it; other factors are dividends or spin-offs), then the filings' share counts (net income / "
    "EPS of successive pystock reports stepping by a small ratio, dated by the day between them whose raw close "
    "moves by its inverse, a distribution allowed: HLT's 1-for-3 of 2017-01-04), then the share splits of "
    "data-real-6's split file of the S&P 500 of 2026-03 (factors that are ratios of small whole numbers; its other "
    "factors are spin-offs) that none of those has within 5 days, where the lake's raw closes under the ticker "
    "are the file's prints (the same company). Only splits up to 2026-02-25. "
    "Complete for what the lake's per-share values need (splits after each ticker's first filing in the lake), not a "
    "full history (e.g. NVDA's 2000-2007 splits are missing).",
)

SPLITS = Stage(
    "splits",
    "The split table from the community table, LEAN factor files, the pystock close pairs and share counts",
    _splits,
    sources=(SPLIT_TABLE, LEAN_FACTORS, REPORTS, SP500_DAILY, SP500_SPLITS),
    needs=("prices_main_2023", "pystock_prices", "pystock_owners"),
    outputs=(dataset("splits", _PROVENANCE_SPLITS),),
)

STAGES = (SPLITS,)
