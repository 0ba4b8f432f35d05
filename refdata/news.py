"""News headlines: the FNSPID Nasdaq headlines of AAPL and the Yahoo headlines of September 2024."""

from __future__ import annotations

import pandas as pd

from refdata.stage import Context, Provenance, Stage, dataset

FNSPID = "data-real/text/fnspid_nasdaq_headlines_AAPL_page.csv"
YAHOO_HEADLINES = "data-real/text/yahoo_headlines_sep2024_MSFT_ADBE_ORCL_PANW.csv"


def build_news(a: pd.DataFrame, y: pd.DataFrame) -> pd.DataFrame:
    """Headlines with a parseable date, one per (ticker, date, title); the source is the URL's host.

    Args:
        a: FNSPID headlines (``ticker_page``, ``date``, ``headline``, ``url``; text).
        y: Yahoo headlines (``ticker``, ``datetime_utc``, ``headline``, ``url``; text).

    Returns:
        ``ticker``, ``date``, ``title``, ``url``, ``source``, ``author``, ``sentiment``: newest first per ticker.

    Example:
        >>> a = pd.DataFrame({"ticker_page": ["AAPL"], "date": ["2024-01-02"], "headline": ["Up"],
        ...                   "url": ["https://www.nasdaq.com/x"]})
        >>> y = pd.DataFrame({"ticker": ["MSFT"], "datetime_utc": ["bad"], "headline": ["Down"], "url": [None]})
        >>> build_news(a, y)[["ticker", "source"]].values.tolist()
        [['AAPL', 'nasdaq.com']]
    """
    a = a.dropna(subset=["date"])
    a = pd.DataFrame({"ticker": a["ticker_page"], "date": a["date"], "title": a["headline"], "url": a["url"]})
    y = y.copy()
    y["date"] = pd.to_datetime(y["datetime_utc"], errors="coerce", utc=True).dt.strftime("%Y-%m-%d")
    y = pd.DataFrame({"ticker": y["ticker"], "date": y["date"], "title": y["headline"], "url": y["url"]})
    df = pd.concat([a, y], ignore_index=True).dropna(subset=["date", "title"])
    df["source"] = df["url"].str.extract(r"https?://(?:www\.)?([^/]+)")[0]
    df["author"] = None
    df["sentiment"] = None
    df = df.drop_duplicates(["ticker", "date", "title"])
    return df.sort_values(["ticker", "date", "title"], ascending=[True, False, True]).reset_index(drop=True)


def _news(ctx: Context) -> dict[str, pd.DataFrame]:
    a = pd.read_csv(ctx.source(FNSPID), dtype=str)
    y = pd.read_csv(ctx.source(YAHOO_HEADLINES), dtype=str)
    return {"news": build_news(a, y)}


_PROVENANCE = Provenance(
    "text/fnspid_nasdaq_headlines_AAPL_page.csv, text/yahoo_headlines_sep2024_MSFT_ADBE_ORCL_PANW.csv",
    "FNSPID CC BY-NC 4.0 (non-commercial); Yahoo headlines without a licence file",
    "headlines with a parseable date; source = URL host; no sentiment is computed",
)

NEWS = Stage(
    "news",
    "News headlines (FNSPID, Yahoo)",
    _news,
    sources=(FNSPID, YAHOO_HEADLINES),
    outputs=(dataset("news", _PROVENANCE),),
)

STAGES = (NEWS,)
