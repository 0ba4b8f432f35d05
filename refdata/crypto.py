"""Crypto bars: Yahoo daily bars of BTC, ETH and SOL (UTC days) and Coinbase minute trade bars."""

from __future__ import annotations

import pandas as pd

from refdata.common import YAHOO
from refdata.stage import Context, Provenance, Stage, dataset

NEW_DAILY = "data-real/crypto/btc_eth_sol_usd_daily_yahoo_2021_2026.csv"
OLD_DAILY = "data-real/crypto/btc_eth_usd_daily_yahoo_2014_2022.csv"
MINUTE = "data-real/crypto/lean_coinbase_minute_trades_BTC_ETH.csv.gz"
COLUMNS = ["ticker", "time", "open", "high", "low", "close", "volume"]


def crypto_daily(new: pd.DataFrame, old: pd.DataFrame) -> pd.DataFrame:
    """Crypto daily bars: the 2021-2026 file, before it the 2014-2022 file (spliced at the new file's first day).

    Args:
        new: the 2021-2026 bars (``symbol``, ``date``, OHLC, ``volume``).
        old: the 2014-2022 bars (with ``adj_close``).

    Returns:
        ``ticker``, ``time`` (UTC), OHLC, ``volume``.

    Example:
        >>> day = lambda d: pd.Timestamp(d)
        >>> new = pd.DataFrame({"symbol": ["BTC-USD"], "date": [day("2021-01-01")], "open": [1.0], "high": [1.0],
        ...                     "low": [1.0], "close": [2.0], "volume": [5]})
        >>> old = new.assign(date=[day("2020-12-31")], close=[1.5], adj_close=[1.5])
        >>> crypto_daily(new, old)["close"].tolist()
        [1.5, 2.0]
    """
    old = old[old["date"] < new["date"].min()]
    daily = pd.concat([old.drop(columns=["adj_close"]), new], ignore_index=True).rename(columns={"symbol": "ticker"})
    daily = daily.dropna(subset=["close"]).sort_values(["ticker", "date"]).drop_duplicates(["ticker", "date"])
    daily["time"] = daily["date"].dt.tz_localize("UTC")
    daily["volume"] = daily["volume"].round().astype("Int64")  # whole units of the quote currency
    return daily[COLUMNS].reset_index(drop=True)


def crypto_minute(minute: pd.DataFrame) -> pd.DataFrame:
    """Coinbase minute trade bars, UTC, tickers spelled as Yahoo spells them (``BTC-USD``).

    Args:
        minute: LEAN's Coinbase bars (``symbol``, ``datetime_utc``, OHLC, ``volume``).

    Returns:
        ``ticker``, ``time`` (UTC), OHLC, ``volume``.
    """
    minute = minute.copy()
    minute["ticker"] = minute["symbol"].str.replace("USD", "-USD", regex=False)
    minute["time"] = pd.to_datetime(minute["datetime_utc"]).dt.tz_localize("UTC")
    return minute[COLUMNS].sort_values(["ticker", "time"]).reset_index(drop=True)


def _crypto(ctx: Context) -> dict[str, pd.DataFrame]:
    new = pd.read_csv(ctx.source(NEW_DAILY), parse_dates=["date"])
    old = pd.read_csv(ctx.source(OLD_DAILY), parse_dates=["date"])
    return {
        "crypto_prices": crypto_daily(new, old),
        "crypto_prices_minute": crypto_minute(pd.read_csv(ctx.source(MINUTE))),
    }


_PROVENANCE_DAILY = Provenance(
    "crypto/btc_eth_sol_usd_daily_yahoo_2021_2026.csv (2021-), crypto/btc_eth_usd_daily_yahoo_2014_2022.csv",
    YAHOO + "; the 2014-2022 file's repository is MIT",
    "UTC daily bars, spliced at 2021-01-01; volume a whole number (the files' volumes are whole), served as the "
    "2025 document's integer",
)

_PROVENANCE_MINUTE = Provenance(
    "crypto/lean_coinbase_minute_trades_BTC_ETH.csv.gz",
    "Apache-2.0 (LEAN)",
    "Coinbase minute trade bars, UTC",
)

CRYPTO = Stage(
    "crypto",
    "Crypto daily bars (Yahoo) and minute bars (Coinbase)",
    _crypto,
    sources=(NEW_DAILY, OLD_DAILY, MINUTE),
    outputs=(
        dataset("crypto_prices", _PROVENANCE_DAILY),
        dataset("crypto_prices_minute", _PROVENANCE_MINUTE),
    ),
)

STAGES = (CRYPTO,)
