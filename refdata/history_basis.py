"""The bases of the price history: the as-traded close on today's split basis and the total-return chain.

A raw source (``ml4t``, ``pystock``) gives the as-traded close; its splits are found in the data (the raw/adjusted
ratio steps by a split ratio) and the split table. Its total return is built from the raw closes and the
distributions the source shows, never from a rounded adjusted close: ``ml4t``'s adjusted close (Yahoo, 2012,
rounded to the cent) steps up on each ex-date by the distribution's share of the price, and ``pystock``'s (crawled
each day) differs from the close only on the eve of an ex-date, by the cash amount.

Example:
    >>> _snap(1.98), _snap(1.7)
    (2.0, None)
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from refdata.common import split_factor

__all__ = ["SPLIT_STEPS", "as_traded", "chain_source", "distributions", "inner_splits", "total_return"]

PYSTOCK_START = pd.Timestamp("2015-03-20")  # the first day of the pystock set: splits after it are in the table
ROUNDING = 0.01  # ml4t's adjusted closes are rounded to the cent: a step of the ratio within this is noise

#: split ratios a gap between two raw windows is rounded to
SPLIT_STEPS = (
    0.05,
    1 / 15,
    0.1,
    1 / 8,
    1 / 7,
    1 / 6,
    0.2,
    0.25,
    1 / 3,
    0.5,  # reverse splits
    1.0,
    1.25,
    1.5,
    2.0,
    2.5,
    3.0,
    4.0,
    5.0,
    6.0,
    7.0,
    8.0,
    10.0,
    15.0,
    20.0,
)


def _snap(x: float, tolerance: float = 0.03) -> float | None:
    """The split ratio ``x`` is (within ``tolerance``), or ``None``."""
    step = min(SPLIT_STEPS, key=lambda s: abs(np.log(x / s)))
    return step if abs(x / step - 1) <= tolerance else None


def inner_splits(piece: pd.DataFrame) -> pd.Series:
    """Splits inside a raw piece: the days its raw/adjusted ratio (or its raw close) steps by a split ratio.

    The raw close is used where the source left the adjusted close unadjusted.

    Args:
        piece: one company's raw bars of one source (``date``, ``raw``, ``adj_src``), sorted by date.

    Returns:
        ``date`` (ex-date) -> ratio.

    Example:
        >>> days = pd.to_datetime(["2005-02-24", "2005-02-25", "2005-02-28"])
        >>> piece = pd.DataFrame({"date": days, "raw": [88.0, 89.0, 44.9], "adj_src": [1.0, 1.011, 1.02]})
        >>> inner_splits(piece).tolist()  # AAPL's 2:1 of 2005-02-28
        [2.0]
    """
    unadjusted = bool(np.allclose(piece["raw"], piece["adj_src"], rtol=1e-4))
    q = piece["raw"] if unadjusted else piece["raw"] / piece["adj_src"]
    step = (q.shift(1) / q).to_numpy()
    out = {}
    for day, x in zip(piece["date"], step, strict=True):
        jump = 1.4 if unadjusted else 1.2
        if np.isfinite(x) and (x >= jump or x <= 1 / jump):  # a split or a reverse split
            ratio = _snap(float(x))
            if ratio is not None and ratio != 1:
                out[day] = ratio
    return pd.Series(out, dtype="float64")


def _later(splits: pd.Series, dates: pd.Series) -> np.ndarray:
    """Product of the ``splits`` (ex-date -> ratio) dated after each date."""
    f = np.ones(len(dates))
    for day, ratio in splits.items():
        f = np.where(dates.to_numpy() < pd.Timestamp(str(day)).to_datetime64(), f * ratio, f)
    return f


def pystock_splits(p: pd.DataFrame, reference: pd.DataFrame | None, identity: str, table: pd.DataFrame) -> np.ndarray:
    """The split factor of each ``pystock`` bar: the splits the source itself shows, then the table's.

    ``pystock`` was crawled daily, so its adjusted close differs from the raw close on the eve of an ex-date only:
    by a split ratio on the eve of a split (NFLX 7:1 on 2015-07-15, BTU 1:15 on 2015-10-01), by the cash on the
    eve of a dividend. Where it shows no split, the company's ``stooq_2017`` adjusted closes are the reference (a
    day the raw/adjusted ratio steps by a split ratio), else the split table; the table gives the splits after the
    last bar.
    """
    after = split_factor(table, pd.Series([identity]), pd.Series([p["date"].max()]))[0]
    eve = (p["raw"] / p["adj_src"]).to_numpy()
    own = {}
    for day, ratio in zip(p["date"].iloc[1:], eve[:-1], strict=True):
        step = _snap(float(ratio)) if ratio >= 1.15 or ratio <= 1 / 1.15 else None
        if step is not None and step != 1:
            own[day] = step
    if own:
        return _later(pd.Series(own, dtype="float64"), p["date"]) * after
    tail = split_factor(table, pd.Series(identity, index=p.index), p["date"])
    if reference is None:
        return tail
    m = p[["date", "raw"]].merge(reference[["date", "adj"]].rename(columns={"adj": "adj_src"}), on="date")
    if len(m) < 20:
        return tail
    return _later(inner_splits(m.sort_values("date")), p["date"]) * after


def as_traded(pieces: list[pd.DataFrame], identity: str, table: pd.DataFrame) -> None:
    """Give the raw pieces a ``close`` on today's split basis (in place); others keep ``close`` missing.

    A ``pystock`` close is its :func:`chain_source` ``continuous`` close. An ``ml4t`` close is divided by the splits
    inside it and the split table's after it, where the 2012-09 .. 2015-03 gap to ``pystock`` is known to hold no
    other split: one total-return chain spans it and the raw/adjusted ratios at its two ends agree within 12% (the
    distributions of 2.5 years) once the table's splits are taken out. A company whose bars end before 2015-03-20
    takes the table's splits after its last bar. Elsewhere (a break in the chain, a spin-off or a high yield across
    the gap, no ``pystock`` bars) ``close`` stays missing: a split is never guessed.
    """
    later = [p for p in pieces if p["source"].iloc[0] == "pystock"]
    last_day = max(p["date"].max() for p in pieces)
    for p in pieces:
        name = p["source"].iloc[0]
        p["close"] = np.nan
        if name == "pystock":
            f = p["raw"] / p["continuous"]
            p["close"] = p["continuous"]
            p["volume"] = (p["volume"].astype("float64") * f).round().astype("Int64")
        elif name == "ml4t":
            inside = inner_splits(p)
            continuous = p["continuous"]
            gap, tail = None, 1.0
            if later and later[0]["adjusted_as_of"].iloc[0] == p["adjusted_as_of"].iloc[0]:
                # one total-return chain across 2012-09 .. 2015-03: raw/adjusted at both ends differ by the splits
                # between them and the distributions; accepted only where no split can hide in it (within 12%:
                # dividends) or where the split table has the split; a spin-off or a high yield is no split
                a, b = p.iloc[-1], later[0].iloc[0]
                x = (a["raw"] / a["adj"]) / (b["raw"] / b["adj"])
                table_gap = (
                    split_factor(table, pd.Series([identity]), pd.Series([a["date"]]))[0]
                    / split_factor(table, pd.Series([identity]), pd.Series([b["date"]]))[0]
                )
                if 0.97 <= x / table_gap <= 1.12:
                    gap = table_gap
                tail = split_factor(table, pd.Series([identity]), pd.Series([b["date"]]))[0]
            elif last_day < PYSTOCK_START:  # dead before the split table starts: no later split is known
                gap, tail = 1.0, split_factor(table, pd.Series([identity]), pd.Series([p["date"].max()]))[0]
            if gap is not None:
                f = _later(inside, p["date"]) * gap * tail
                p["close"] = p["raw"] / f
                if "dividend" in p and p["dividend"].notna().any():  # cash per share on the close's basis
                    p["dividend"] = p["dividend"] * p["close"] / continuous
                p["volume"] = (p["volume"].astype("float64") * f).round().astype("Int64")


def chain_source(rows: pd.DataFrame, identity: str, table: pd.DataFrame, reference: pd.DataFrame | None) -> None:
    """One raw source's bars of a company, given their total-return chain before they are linked (in place).

    ``continuous`` is the close without a split inside (``pystock``: on today's split basis; ``ml4t``: raw divided
    by the splits inside it), ``dividend`` the cash per share on that basis, ``adj`` the chain of
    ``(close + cash) / previous close`` ending at the source's own last adjusted close, so linking it to the
    adjusted sources compares total return with total return.

    Args:
        rows: the company's bars of one raw source (``source``, ``date``, ``raw``, ``adj_src``), sorted by date.
        identity: the company's ticker (for the split table).
        table: the split table.
        reference: the company's ``stooq_2017`` bars (the splits of ``pystock`` are read against them), or ``None``.
    """
    source = str(rows["source"].iloc[0])
    if source == "pystock":
        continuous = rows["raw"] / pystock_splits(rows, reference, identity, table)
        cash = distributions(rows, continuous, "pystock")
    else:
        continuous = rows["raw"] / _later(inner_splits(rows), rows["date"])
        unadjusted = bool(np.isclose(rows["raw"], rows["adj_src"], rtol=1e-4).all())
        cash = pd.Series(0.0, index=rows.index) if unadjusted else distributions(rows, continuous, "ml4t")
    rows["adj"] = rows["adj_src"]
    total_return(rows, continuous, cash)
    rows["continuous"] = continuous
    if source == "ml4t" and bool(np.isclose(rows["raw"], rows["adj_src"], rtol=1e-4).all()):
        rows["dividend"] = np.nan  # no distribution known: a price return


def distributions(p: pd.DataFrame, continuous: pd.Series, source: str) -> pd.Series:
    """The cash distributed per share on each ex-date of a raw piece, on the basis of ``continuous``.

    Args:
        p: the piece (``raw``, ``adj_src``), sorted by date.
        continuous: its closes without a split inside (the as-traded close, or raw divided by its inner splits).
        source: ``pystock`` (the adjusted close differs from the close on the eve of an ex-date, by the cash
            amount) or ``ml4t`` (the adjusted close is scaled down before each ex-date by the distribution's share
            of the eve's close; steps within the cent rounding are noise).

    Returns:
        Cash per share aligned to ``p`` (0 where none).

    Example:
        >>> p = pd.DataFrame({"raw": [40.33, 40.0, 40.2], "adj_src": [40.0, 40.0, 40.2]})
        >>> distributions(p, p["raw"], "pystock").round(2).tolist()  # KO's 0.33 on the day after the eve
        [0.0, 0.33, 0.0]
    """
    scale = (continuous / p["raw"]).to_numpy()
    if source == "pystock":
        eve = (p["raw"] - p["adj_src"]).to_numpy() * scale  # on the eve's basis
        ratio = (p["raw"] / p["adj_src"]).to_numpy()
        split_eve = np.array([r >= 1.15 and _snap(float(r)) is not None for r in ratio])  # a split, not cash
        cash = np.where(np.isclose(p["raw"], p["adj_src"], rtol=1e-6) | split_eve, 0.0, eve)
        return pd.Series(np.r_[0.0, cash[:-1]], index=p.index).clip(lower=0)
    q = (p["adj_src"] / continuous).to_numpy()
    step = q[1:] / q[:-1]  # 1 / (1 - D / close of the eve)
    noise = ROUNDING / p["adj_src"].to_numpy()[:-1] + 1e-4
    share = np.where(step - 1 > noise, 1 - 1 / step, 0.0)
    return pd.Series(np.r_[0.0, share * continuous.to_numpy()[:-1]], index=p.index)


def total_return(p: pd.DataFrame, continuous: pd.Series, cash: pd.Series) -> None:
    """Rebuild a raw piece's adjusted close from its closes and distributions (in place).

    The chain ``(close + cash) / previous close`` is scaled to end at the piece's linked adjusted close, so the
    splice to the next piece is kept and every day's total return is exact to the raw closes.

    Example:
        >>> p = pd.DataFrame({"adj": [9.0, 10.0, 10.0]})
        >>> total_return(p, pd.Series([10.0, 11.0, 10.0]), pd.Series([0.0, 0.0, 1.0]))
        >>> p["adj"].round(4).tolist()  # day 3: the close falls by the dividend, the total return is 0
        [9.0909, 10.0, 10.0]
    """
    c = continuous.to_numpy(dtype="float64")
    growth = np.r_[1.0, (c[1:] + cash.to_numpy()[1:]) / c[:-1]]
    chain = np.cumprod(growth)
    p["adj"] = chain * (float(p["adj"].iloc[-1]) / chain[-1])
    p["dividend"] = cash.to_numpy()
