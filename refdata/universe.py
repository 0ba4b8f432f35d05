"""The S&P 500 constituents list: the broad universe's members (an intermediate) and SPY's holdings (``index_funds``).

The members (ticker, CIK, name, GICS sector and sub-industry, headquarters) decide which tickers get pystock
statements, prices and splits, and give company facts and CIKs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from refdata.common import norm_ticker
from refdata.stage import Context, Provenance, Stage, dataset, intermediate

CONSTITUENTS = "data-real/company/sp500_constituents.csv"
#: the list date of company/sp500_constituents.csv (its repository commit, data-real/SOURCES.md)
CONSTITUENTS_AS_OF = "2026-08-08"
#: where SPY's holdings come from (the fund header's ``source``): index membership, not a filing of the fund
SPY_SOURCE = f"index membership: the S&P 500 constituents list of {CONSTITUENTS_AS_OF} (datasets/s-and-p-500-companies)"


def universe(sp: pd.DataFrame) -> pd.DataFrame:
    """S&P 500 members from the constituents list.

    Args:
        sp: the constituents list (text columns ``Symbol``, ``CIK``, ``Security``, ``GICS Sector``, ...).

    Returns:
        ``ticker``, ``cik`` (10 digits), ``name``, ``sector``, ``industry``, ``location``.

    Example:
        >>> sp = pd.DataFrame({"Symbol": ["BRK.B"], "CIK": ["1067983"], "Security": ["Berkshire Hathaway"],
        ...                    "GICS Sector": ["Financials"], "GICS Sub-Industry": ["Multi-Sector Holdings"],
        ...                    "Headquarters Location": ["Omaha, Nebraska"]})
        >>> universe(sp)[["ticker", "cik"]].values.tolist()
        [['BRK-B', '0001067983']]
    """
    return pd.DataFrame(
        {
            "ticker": norm_ticker(sp["Symbol"]),
            "cik": sp["CIK"].str.zfill(10),
            "name": sp["Security"],
            "sector": sp["GICS Sector"],
            "industry": sp["GICS Sub-Industry"],
            "location": sp["Headquarters Location"],
        }
    )


def spy_holdings(sp: pd.DataFrame) -> pd.DataFrame:
    """SPY's holdings as index membership: every S&P 500 member (the fund replicates the index).

    The constituents list names members, not the fund's filed positions: weight, market value and shares are
    missing, not invented.

    Args:
        sp: the constituents list.

    Returns:
        The ``index_funds`` rows, sorted by ticker.
    """
    return pd.DataFrame(
        {
            "fund": "SPY",
            "fund_name": "SPDR S&P 500 ETF Trust",
            "fund_cik": "0000884394",
            "ticker": norm_ticker(sp["Symbol"]),
            "name": sp["Security"],
            "cusip": None,
            "isin": None,
            "weight": np.nan,
            "market_value": np.nan,
            "shares": np.nan,
            "asset_class": "equity",
            "as_of": pd.Timestamp(CONSTITUENTS_AS_OF),
            "filing_date": pd.NaT,
            "resolution_status": "resolved",
            "source": SPY_SOURCE,
            "total_net_assets": np.nan,
        }
    ).sort_values("ticker", ignore_index=True)


def _constituents(ctx: Context) -> dict[str, pd.DataFrame]:
    sp = pd.read_csv(ctx.source(CONSTITUENTS), dtype=str)
    return {"members": universe(sp), "index_funds": spy_holdings(sp)}


_PROVENANCE_INDEX_FUNDS = Provenance(
    "company/sp500_constituents.csv (the S&P 500 list of 2026-08-08)",
    "ODC-PDDL-1.0",
    "SPY (SPDR S&P 500 ETF Trust, CIK 0000884394) as index membership: one row per member; the fund's filed "
    "positions are not in the sources, so weight, market_value, shares, cusip and isin are missing (null), "
    "never estimated, and so are the header's filing_date (no N-PORT filing) and total_net_assets; the header's "
    "source says 'index membership: the S&P 500 constituents list of 2026-08-08 ...', total_holdings and "
    "holdings_resolved count the members (503, every one a ticker)",
)

CONSTITUENTS_STAGE = Stage(
    "sp500_constituents",
    "The S&P 500 members of the constituents list, and SPY's holdings as index membership",
    _constituents,
    sources=(CONSTITUENTS,),
    outputs=(intermediate("members"), dataset("index_funds", _PROVENANCE_INDEX_FUNDS)),
)

STAGES = (CONSTITUENTS_STAGE,)
