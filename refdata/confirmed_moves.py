"""Daily moves beyond +/-25% of the S&P 500 source's bars that an independent file prints too (within 2 points).

``fdkit lake validate`` asks every move beyond the lake's limit for an explanation: an earnings release, a
distribution, or a reviewed reason. Most moves of the S&P 500 members of 2016-2026 (the 2020 crash, results days)
are printed by Stooq's adjusted closes too (``data-real-5``, files the lake's bars do not come from): such a move
happened, whatever its cause. This module finds them and writes them as ``price_move`` rows of the reviewed-facts
table (:mod:`fdkit.lake.reviewed`, which :mod:`fdkit.lake.validate` reads) under its own name as ``reviewed_by``,
one row per move with its evidence: the file and its move (:func:`as_reviewed_facts`).

Example:
    >>> t = pd.to_datetime(["2020-03-13", "2020-03-16"]).tz_localize("UTC")
    >>> bars = pd.DataFrame({"ticker": "X", "time": t, "close": [10.0, 7.0]})
    >>> printed = pd.DataFrame({"symbol": "X", "date": pd.to_datetime(["2020-03-16"]), "r": [-0.29],
    ...                         "source": "stooq.parquet"})
    >>> confirmed(bars, printed, {"X": {"X"}})[["ticker", "day", "source"]].values.tolist()
    [['X', '2020-03-16', 'stooq.parquet']]
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

__all__ = ["REVIEWER", "STOOQ", "as_reviewed_facts", "confirmed", "moves", "printed_returns", "symbols_of"]

#: the ``reviewed_by`` of the rows this module writes (it rewrites those alone)
REVIEWER = "refdata.confirmed_moves"
#: Stooq's split- and dividend-adjusted closes of the S&P 1500 ever-members (Kaggle CC0 and stooq.com)
STOOQ = (
    "data-real-5/prices/stooq_kaggle_sp1500_daily_adj_2005_2017.parquet",
    "data-real-5/prices/stooq_sp1500_daily_adj_2017_2025.parquet",
)
#: the lake's daily limit (:data:`fdkit.lake.validate.MOVE_LIMIT`) and the agreement asked of the other file
LIMIT, AGREE = 0.25, 0.02


def moves(bars: pd.DataFrame) -> pd.DataFrame:
    """Close-to-close moves beyond :data:`LIMIT` between bars at most 10 days apart (``ticker``, ``day``, ``move``).

    Example:
        >>> t = pd.to_datetime(["2020-03-13", "2020-03-16", "2020-06-01"]).tz_localize("UTC")
        >>> moves(pd.DataFrame({"ticker": "X", "time": t, "close": [10.0, 7.0, 3.0]}))["move"].round(2).tolist()
        [-0.3]
    """
    p = bars[["ticker", "time", "close"]].assign(ticker=bars["ticker"].astype(str))
    p = p.sort_values(["ticker", "time"], kind="stable")
    g = p.groupby("ticker", sort=False)
    r = p["close"] / g["close"].shift() - 1
    near = (p["time"] - g["time"].shift()).dt.days < 10
    out = p.loc[(r.abs() > LIMIT) & near, ["ticker", "time"]].assign(move=r)
    return pd.DataFrame({"ticker": out["ticker"], "day": out["time"].dt.strftime("%Y-%m-%d"), "move": out["move"]})


def symbols_of(tickers: set[str], spells: pd.DataFrame) -> dict[str, set[str]]:
    """The symbols each ticker traded under: itself, and the old symbols its membership spells name.

    Example:
        >>> spells = pd.DataFrame({"ticker": ["VIAC"], "current_ticker": ["PSKY"]})
        >>> sorted(symbols_of({"PSKY"}, spells)["PSKY"])
        ['PSKY', 'VIAC']
    """
    out = {t: {t} for t in tickers}
    for old, now in zip(spells["ticker"].astype(str), spells["current_ticker"].astype(str), strict=True):
        if now in out:
            out[now].add(old)
    return out


def printed_returns(paths: Mapping[str, Path], symbols: set[str]) -> pd.DataFrame:
    """Daily returns of ``symbols`` in the files (``symbol``, ``date``, ``r``, ``source``), read with pandas."""
    frames = []
    for name, path in paths.items():
        d = pd.read_parquet(path, columns=["symbol", "date", "close"], filters=[("symbol", "in", sorted(symbols))])
        d = d.assign(date=pd.to_datetime(d["date"])).sort_values(["symbol", "date"], kind="stable")
        d["r"] = d.groupby("symbol")["close"].pct_change()
        frames.append(d[["symbol", "date", "r"]].assign(source=Path(name).name))
    return pd.concat(frames, ignore_index=True)


def confirmed(bars: pd.DataFrame, printed: pd.DataFrame, symbols: Mapping[str, set[str]]) -> pd.DataFrame:
    """The moves of ``bars`` that a file of ``printed`` shows within :data:`AGREE` on the same day.

    Returns:
        ``ticker``, ``day``, ``move``, ``source``, ``source_move`` (sorted; one row per move: the first file that
        prints it).
    """
    big = moves(bars)
    pr = printed.assign(day=printed["date"].dt.strftime("%Y-%m-%d"))
    rows = []
    for ticker, day, move in zip(
        big["ticker"].astype(str), big["day"].astype(str), big["move"].astype(float), strict=True
    ):
        mine = pr[pr["symbol"].isin(symbols.get(ticker, {ticker})) & (pr["day"] == day)]
        agree = mine[(mine["r"].astype(float) - move).abs() <= AGREE]
        if len(agree):
            theirs = round(float(agree["r"].iloc[0]), 4)
            rows.append(
                {
                    "ticker": ticker,
                    "day": day,
                    "move": round(move, 4),
                    "source": str(agree["source"].iloc[0]),
                    "source_move": theirs,
                }
            )
    cols = ["ticker", "day", "move", "source", "source_move"]
    return pd.DataFrame(rows, columns=cols).sort_values(["ticker", "day"]).reset_index(drop=True)


def as_reviewed_facts(found: pd.DataFrame, reviewed_on: str) -> pd.DataFrame:
    """:func:`confirmed`'s moves as ``price_move`` rows of the reviewed-facts table (:mod:`fdkit.lake.reviewed`).

    Example:
        >>> found = pd.DataFrame({"ticker": ["X"], "day": ["2020-03-16"], "move": [-0.3],
        ...                       "source": ["stooq.parquet"], "source_move": [-0.29]})
        >>> as_reviewed_facts(found, "2026-12-02").iloc[0][["value", "reason"]].tolist()
        ['-0.3000', '-30%, printed by stooq.parquet too (-29%)']
    """
    move, theirs = found["move"].astype(float), found["source_move"].astype(float)
    return pd.DataFrame(
        {
            "kind": "price_move",
            "ticker": found["ticker"].astype(str),
            "start_date": found["day"].astype(str),
            "end_date": "",
            "cik": "",
            "value": [f"{m:+.4f}" for m in move],
            "reason": [
                f"{m:+.0%}, printed by {s} too ({t:+.0%})"
                for m, s, t in zip(move, found["source"], theirs, strict=True)
            ],
            "evidence": [
                f"data-real-5/prices/{s}: {t:+.4f} that day" for s, t in zip(found["source"], theirs, strict=True)
            ],
            "reviewed_by": REVIEWER,
            "reviewed_on": reviewed_on,
        }
    )
