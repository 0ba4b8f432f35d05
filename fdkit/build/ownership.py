"""Ownership: insider trades and holdings (Forms 3, 4 and 5) and institutional positions (13F)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd

from fdkit.build.common import SEC_PD, split_factor, tuples
from fdkit.build.stage import Context, Provenance, Stage, dataset
from fdkit.catalog.schema import OWNERSHIP_FORMS
from fdkit.research.ratios import price_on_or_before

FORM345 = "data-real/insider/form345_transactions_parsed.csv"
RAW_DOCUMENTS = "data-real/insider/raw/*"
FORM13F = "data-real/insider/form13f_holdings_parsed.csv"
SEC_TICKERS = "data-real/company/sec_company_tickers.csv"

_CODES = {"S": "Sale", "P": "Purchase", "A": "Grant", "M": "Option Exercise", "F": "Tax Withholding",
          "G": "Gift", "D": "Disposition to Issuer", "C": "Conversion", "J": "Other",
          "X": "Option Exercise"}  # fmt: skip


def signature_dates(paths: list[Path]) -> dict[tuple[str, str, str], str]:
    """The owner's signature date of each bundled ownership document, by (issuer CIK, form, period of report).

    Args:
        paths: the raw Form 3/4/5 documents (XML, or a submission text file holding one), sorted.

    Returns:
        ``(10-digit issuer CIK, document type, period of report) -> signature date``.
    """
    out = {}
    for p in paths:
        text = p.read_text(errors="replace")
        start = text.find("<ownershipDocument")
        if start < 0:
            continue
        try:
            root = ET.fromstring(text[start : text.rfind("</ownershipDocument>") + len("</ownershipDocument>")])
        except ET.ParseError:
            continue

        def get(path: str, doc: ET.Element = root) -> str:
            return (doc.findtext(path) or "").strip()

        key = (get("issuer/issuerCik").zfill(10), get("documentType"), get("periodOfReport"))
        sig = get("ownerSignature/signatureDate")
        if sig:
            out[key] = sig
    return out


def build_insiders(
    df: pd.DataFrame, index: pd.DataFrame, sigs: dict[tuple[str, str, str], str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Insider trades (Form 4 transaction rows) and holdings (Forms 3 and 5) from the parsed Form 3/4/5 rows.

    The filing date is the EDGAR index's, else the owner's signature date, else the period of report; shares are
    negative for dispositions.

    Args:
        df: the parsed rows (text).
        index: the submissions index.
        sigs: signature dates (:func:`signature_dates`).

    Returns:
        The ``insider_trades`` and ``insider_ownership`` rows.
    """
    df = df.copy()
    filed_by_accn = dict(zip(index["accessionNumber"], index["filingDate"], strict=True)) if len(index) else {}

    def filing_date(r) -> str:
        return filed_by_accn.get(r.accession) or sigs.get((str(r.issuer_cik).zfill(10), r.document_type,
                                                           r.period_of_report)) or r.period_of_report  # fmt: skip

    df["filing_date"] = [filing_date(r) for r in tuples(df)]

    def num(c: str) -> pd.Series:
        return pd.to_numeric(df[c], errors="coerce")

    shares = num("shares")
    signed = np.where(df["acquired_disposed"] == "D", -shares, shares)
    after = num("shares_owned_after")
    common = {"ticker": df["issuer_symbol"], "filing_date": df["filing_date"], "issuer": df["issuer_name"],
              "name": df["owner_name"], "title": df["officer_title"],
              "is_board_director": df["is_director"].isin(["1", "true", "True"]),
              "security_title": df["security_title"], "accession_number": df["accession"],
              "form_type": df["document_type"]}  # fmt: skip
    tx = df["row_type"].str.endswith("Transaction")
    trades = pd.DataFrame({**common, "transaction_date": df["transaction_date"], "transaction_shares": signed,
                           "transaction_price_per_share": num("price_per_share"),
                           "transaction_value": shares * num("price_per_share"),
                           "shares_owned_before_transaction": after - signed,
                           "shares_owned_after_transaction": after,
                           "transaction_type": df["transaction_code"].map(_CODES).fillna(df["transaction_code"]),
                           })[tx]  # fmt: skip
    # a derivative holding states the shares underlying it
    owned = after.fillna(num("underlying_shares").where(df["table"] == "derivative"))
    hold = pd.DataFrame({**common, "is_officer": df["is_officer"].isin(["1", "true", "True"]),
                         "is_ten_percent_owner": df["is_ten_pct"].isin(["1", "true", "True"]),
                         "shares_owned": owned, "direct_or_indirect": df["direct_indirect"],
                         "holding_type": df["table"], "as_of_date": df["period_of_report"]})  # fmt: skip
    # ownership: the holdings reported on Forms 3 and 5 (and their amendments); Form 4 rows are trades
    hold = hold[df["row_type"].str.endswith("Holding") & df["document_type"].isin(OWNERSHIP_FORMS)]
    order = ["ticker", "filing_date", "accession_number"]
    return (trades.sort_values(order, kind="stable").reset_index(drop=True),
            hold.sort_values(order, kind="stable").reset_index(drop=True))  # fmt: skip


def _norm_name(s: str) -> str:
    s = re.sub(r"[^A-Z0-9 ]", " ", str(s).upper())
    s = re.sub(r"\b(INC|CORP|CORPORATION|CO|COMPANY|LTD|PLC|CLASS|CL|THE|HLDGS|HOLDINGS|NEW|COM)\b", " ", s)
    return " ".join(s.split())


def build_institutional(
    df: pd.DataFrame, tickers: pd.DataFrame, daily: pd.DataFrame, splits: pd.DataFrame
) -> pd.DataFrame:
    """13F positions: values in dollars, share counts on the lake's split basis.

    13F values were in thousands of dollars until the SEC's 2023 switch to dollars, but some filers kept
    reporting thousands after it. The unit is decided per filing: where the median of value / shares over the
    filing's priced positions is within a factor of 10 of the raw close / 1,000, the filing is in thousands.

    Args:
        df: the parsed 13F information tables (text).
        tickers: the SEC ticker file (``ticker``, ``title``; text).
        daily: the daily bars.
        splits: the split table.

    Returns:
        One row per (ticker, period, investor, put/call), sorted.
    """
    df = df[df["manager"].notna() & df["period"].notna()]
    by_name: dict[str, str] = {}
    for r in tuples(tickers):  # first listed ticker of a title wins (the SEC file's order)
        by_name.setdefault(_norm_name(r.title), str(r.ticker).replace(".", "-"))
    df["ticker"] = df["name_of_issuer"].map(lambda n: by_name.get(_norm_name(n)))
    df = df.dropna(subset=["ticker"])
    period = pd.to_datetime(df["period"].str[:8], format="%Y%m%d")
    filed = pd.to_datetime(df["filed"].str[:8], format="%Y%m%d")
    value = pd.to_numeric(df["value"], errors="coerce").to_numpy(dtype=float)
    shares = pd.to_numeric(df["shares_or_principal"], errors="coerce").to_numpy(dtype=float)
    # the close on the report date, on the basis of the filing day (raw shares are as of the filing)
    keys = pd.DataFrame({"ticker": df["ticker"].to_numpy(), "report_period": period.to_numpy()})
    close = price_on_or_before(keys, daily, max_age=pd.Timedelta(days=7)).to_numpy() * split_factor(
        splits, keys["ticker"], filed
    )
    ratio = pd.Series(value / shares / close).replace([np.inf, -np.inf], np.nan)
    per_filing = ratio.groupby(df["accession"].to_numpy()).median()
    in_thousands = df["accession"].map(per_filing).between(1e-4, 1e-2).to_numpy()
    thousands = in_thousands | (filed < pd.Timestamp("2023-01-03")).to_numpy()
    value = np.where(thousands, value * 1000.0, value)
    k = split_factor(splits, keys["ticker"], filed)
    out = pd.DataFrame({"ticker": df["ticker"].to_numpy(), "report_period": period.to_numpy(),
                        "investor": df["manager"].str.upper().to_numpy(),
                        "investor_cik": df["accession"].str[:10].to_numpy(), "shares": shares * k,
                        "market_value": value, "filing_date": filed.to_numpy(),
                        "accession_number": df["accession"].to_numpy(),
                        "put_call": df["put_call"].to_numpy(),
                        "name_of_issuer": df["name_of_issuer"].to_numpy(), "cusip": df["cusip"].to_numpy(),
                        "title_of_class": df["title_of_class"].to_numpy()})  # fmt: skip
    key = ["ticker", "report_period", "investor", "put_call"]
    out = out.groupby(key, dropna=False, as_index=False).agg(
        investor_cik=("investor_cik", "first"),
        shares=("shares", "sum"),
        market_value=("market_value", "sum"),
        filing_date=("filing_date", "first"),
        accession_number=("accession_number", "first"),
        name_of_issuer=("name_of_issuer", "first"),
        cusip=("cusip", "first"),
        title_of_class=("title_of_class", "first"),
    )
    out["price"] = out["market_value"] / out["shares"]
    return out.sort_values(["ticker", "report_period", "investor"]).reset_index(drop=True)


def _insiders(ctx: Context) -> dict[str, pd.DataFrame]:
    df = pd.read_csv(ctx.source(FORM345), dtype=str)
    trades, holdings = build_insiders(df, ctx["filings_index"], signature_dates(ctx.glob(RAW_DOCUMENTS)))
    return {"insider_trades": trades, "insider_ownership": holdings}


def _institutional(ctx: Context) -> dict[str, pd.DataFrame]:
    df = pd.read_csv(ctx.source(FORM13F), dtype=str)
    tickers = pd.read_csv(ctx.source(SEC_TICKERS), dtype=str)
    return {"institutional_ownership": build_institutional(df, tickers, ctx["prices"], ctx["splits"])}


_PROVENANCE_TRADES = Provenance(
    "insider/form345_transactions_parsed.csv, insider/raw/*.xml, insider/insider_filings_index_*.csv",
    SEC_PD,
    "transaction rows; filing date from the EDGAR index, else the signature date, else the period of report; "
    "shares negative for dispositions",
)

_PROVENANCE_OWNERSHIP = Provenance(
    "as insider_trades",
    SEC_PD,
    "the holding rows of Forms 3 and 5 (and 3/A, 5/A; Form 4 rows are trades and their resulting positions "
    "are insider_trades.shares_owned_after_transaction); as_of_date = the form's period of report; "
    "holding_type = non_derivative or derivative (its table); a derivative holding's shares_owned = the "
    "shares underlying it. The bundled documents carry no amendment (3/A, 4/A, 5/A), so no webhook replay "
    "exercises the receiver's amendment rule on real data (tests do, on events they write)",
)

_PROVENANCE_INSTITUTIONAL = Provenance(
    "insider/form13f_holdings_parsed.csv, company/sec_company_tickers.csv",
    SEC_PD,
    "issuer names matched to tickers by normalised SEC title; values before 2023-01-03 were in USD thousands "
    "and are multiplied by 1,000, and so are the filings after it whose median value / shares is about a "
    "thousandth of the close (filers that kept reporting thousands); share counts on the split basis; rows "
    "of one (ticker, period, investor, put/call) summed. name_of_issuer, cusip and title_of_class as the "
    "13F reports them; /institutional-holdings serves these rows in the 2026 shape, where form_type is null "
    "(the parsed information tables do not say whether they came with a 13F-HR or a 13F-HR/A)",
)

INSIDERS = Stage(
    "insiders",
    "Insider trades (Form 4) and holdings (Forms 3 and 5)",
    _insiders,
    sources=(FORM345, RAW_DOCUMENTS),
    needs=("filings_index",),
    outputs=(
        dataset("insider_trades", _PROVENANCE_TRADES),
        dataset("insider_ownership", _PROVENANCE_OWNERSHIP),
    ),
)

INSTITUTIONAL = Stage(
    "institutional_ownership",
    "13F positions in dollars, share counts on the split basis",
    _institutional,
    sources=(FORM13F, SEC_TICKERS),
    needs=("prices", "splits"),
    outputs=(dataset("institutional_ownership", _PROVENANCE_INSTITUTIONAL),),
)

STAGES = (INSIDERS, INSTITUTIONAL)
