"""Ownership: insider trades and holdings (Forms 3, 4 and 5) and institutional positions (13F)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd

from fdkit.catalog.schema import OWNERSHIP_FORMS
from fdkit.research.ratios import price_on_or_before
from refdata.common import R2, SEC_PD, norm_ticker, split_factor, tuples
from refdata.form4_dates import FIRST_SEEN, SEC_2024Q3, with_filing_dates
from refdata.stage import Context, Provenance, Stage, dataset

FORM345 = "data-real/insider/form345_transactions_parsed.csv"
FORM4 = "data-real-2/insider/form4_nonderiv_transactions_sp500_2022_2026.csv.gz"
RAW_DOCUMENTS = "data-real/insider/raw/*"
FORM13F = "data-real/insider/form13f_holdings_parsed.csv"
#: the form of every information table of FORM13F: its SOURCES.md (data-real, section d) lists them as "Parsed
#: 13F-HR information tables" of six filings and names no amendment (13F-HR/A) among them
FORM13F_TYPE = "13F-HR"
SEC_TICKERS = "data-real/company/sec_company_tickers.csv"

_CODES = {"S": "Sale", "P": "Purchase", "A": "Grant", "M": "Option Exercise", "F": "Tax Withholding",
          "G": "Gift", "D": "Disposition to Issuer", "C": "Conversion", "J": "Other",
          "X": "Option Exercise", "L": "Small Acquisition", "I": "Discretionary", "U": "Tender of Shares",
          "W": "Will or Laws of Descent", "K": "Equity Swap", "Z": "Voting Trust"}  # fmt: skip
#: Form 4 codes whose direction the SEC's definition fixes (the other codes, G J I W K Z, go either way)
_ACQUIRED, _DISPOSED = frozenset("ACLMPX"), frozenset("DFSU")
#: what the Form 4 table writes for an issuer with no listed symbol (non-traded funds): no ticker to serve them under
NO_SYMBOL = frozenset({"N/A", "NONE"})
#: symbols of the Form 4 table reviewed by hand, (symbol as filed, issuer as filed) -> the issuer's symbol: garbled
#: or mistyped symbols (``FN`` is Fabrinet's, ``BNY`` is BNY Mellon's in the lake), and renames the index membership
#: spells do not hold (Fiserv FI 2023-2025 -> FISV, NortonLifeLock -> Gen Digital, Rubicon RBT -> RBTC on the OTC)
FORM4_SYMBOLS = {("-", "HONEYWELL INTERNATIONAL INC"): "HON", ("NCLH]", "Norwegian Cruise Line Holdings Ltd."): "NCLH",
                 ("PARAA,PARA", "Paramount Global"): "PARA", ("fo9jod#z", "Sandisk Corp"): "SNDK",
                 ("LLYVA/K", "Liberty Live Holdings, Inc."): "LLYVA", ("BRKB", "BERKSHIRE HATHAWAY INC"): "BRK-B",
                 ("ISGR", "INTUITIVE SURGICAL INC"): "ISRG", ("OMCV", "OMNICOM GROUP INC."): "OMC",
                 ("FN", "DoorDash, Inc."): "DASH", ("BNY", "BLACKROCK NEW YORK MUNICIPAL INCOME TRUST"): "BNY_2024",
                 ("FI", "FISERV INC"): "FISV", ("NLOK", "NortonLifeLock Inc."): "GEN",
                 ("NLOK", "Gen Digital Inc."): "GEN", ("RBT", "Rubicon Technologies, Inc."): "RBTC"}  # fmt: skip


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
    # the EDGAR index dates a filing exactly; a signature date (or the period) is on or before it
    df["filing_date_kind"] = ["exact" if r.accession in filed_by_accn else "lower_bound" for r in tuples(df)]

    def num(c: str) -> pd.Series:
        return pd.to_numeric(df[c], errors="coerce")

    shares = num("shares")
    signed = np.where(df["acquired_disposed"] == "D", -shares, shares)
    after = num("shares_owned_after")
    common = {"ticker": df["issuer_symbol"], "filing_date": df["filing_date"],
              "filing_date_kind": df["filing_date_kind"], "issuer": df["issuer_name"],
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


def served_symbols(symbol: pd.Series, day: pd.Series, members: pd.DataFrame) -> pd.Series:
    """The ticker the lake serves a company under, from the symbol it filed under on a day.

    A membership spell of the symbol holding the day gives its company's ticker (``FB`` 2022 -> ``META``, ``PEAK``
    -> ``DOC``); a symbol no spell holds keeps its spelling where it is some company's ticker today or no spell
    knows it, else takes the ticker of its nearest spell (``BLL`` filed days after the rename -> ``BALL``).

    Args:
        symbol: symbols in the lake's spelling.
        day: the day of each row.
        members: ``index_membership`` (``ticker``, ``start_date``, ``end_date``, ``current_ticker``).

    Returns:
        The served ticker of each row.
    """
    spells = members[["ticker", "start_date", "end_date", "current_ticker"]].astype({"ticker": str})
    spells = spells.assign(start_date=pd.to_datetime(spells["start_date"]), end_date=pd.to_datetime(spells["end_date"]))
    today = set(spells["current_ticker"].astype(str))
    out = symbol.astype(object).copy()
    for sym, idx in symbol.groupby(symbol, sort=True).groups.items():
        own = spells[spells["ticker"] == sym]
        if own.empty or set(own["current_ticker"]) == {sym}:
            continue
        for i in idx:
            d = day[i]
            inside = own[(own["start_date"] <= d) & (own["end_date"].isna() | (own["end_date"] >= d))]
            if len(inside):
                out[i] = inside["current_ticker"].iloc[0]
            elif sym not in today:
                gap = np.minimum((own["start_date"] - d).abs(), (own["end_date"].fillna(d) - d).abs())
                out[i] = own["current_ticker"].iloc[int(np.argmin(gap.to_numpy()))]
    return out


def _directions(code: pd.Series, owner: pd.Series, day: pd.Series, shares: pd.Series, after: pd.Series) -> np.ndarray:
    """+1 acquired, -1 disposed, 0 unknown: by the code where it fixes the direction, else by the holding after.

    For a gift, an "other" or another two-way code, the owner's previous row (by day, then the source's order) says
    it where its holding after plus or minus the shares is this row's holding after; a holding after smaller than
    the shares can only follow a disposition.
    """
    sign = np.where(code.isin(_ACQUIRED), 1, np.where(code.isin(_DISPOSED), -1, 0))
    order = np.lexsort((np.arange(len(code)), day.to_numpy(), owner.to_numpy()))
    o_after, o_owner = after.to_numpy()[order], owner.to_numpy()[order]
    prev = np.r_[np.nan, o_after[:-1]]
    prev[np.r_[True, o_owner[1:] != o_owner[:-1]]] = np.nan
    prev_after = np.empty(len(code))
    prev_after[order] = prev
    sh, af = shares.to_numpy(dtype=float), after.to_numpy(dtype=float)
    up = np.isclose(prev_after + sh, af, rtol=1e-9, atol=1e-3)
    down = np.isclose(prev_after - sh, af, rtol=1e-9, atol=1e-3) | (af < sh)
    either = np.where(up & ~down, 1, np.where(down & ~up, -1, 0))
    return np.where(sign != 0, sign, np.where(sh == 0, 1, either))


def build_form4_trades(raw: pd.DataFrame, members: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, int]]:
    """Insider trades from the Form 4 non-derivative transaction table (no filing date, accession or table II).

    Args:
        raw: the table as text (``keep_default_na=False``: an empty cell is ``""``).
        members: ``index_membership``, for the served tickers (:func:`served_symbols`).

    Returns:
        The ``insider_trades`` rows (unsorted) and counts: ``rows``, ``no_symbol``, ``repeated``, ``direction_unknown``.
    """
    counts = {"rows": len(raw)}
    keep = ~raw["ticker"].str.strip().str.upper().isin(NO_SYMBOL)
    counts["no_symbol"] = int((~keep).sum())
    df = raw[keep].reset_index(drop=True)
    fixed = [FORM4_SYMBOLS.get(k) for k in zip(df["ticker"], df["issuer_name"], strict=True)]
    symbol = norm_ticker(pd.Series(fixed, dtype=object).fillna(df["ticker"]))
    day = pd.to_datetime(df["transaction_date"].str[:10], format="%Y-%m-%d")  # one date carries "-05:00"
    ticker = served_symbols(symbol, day, members)

    def num(c: str) -> pd.Series:
        return pd.to_numeric(df[c].replace("", None), errors="raise").astype(float)

    shares, price, after = num("transaction_shares"), num("transaction_price"), num("shares_after_transaction")
    code = df["transaction_type"].str.strip()
    way = _directions(code, ticker + "|" + df["reporting_owner_cik"], day, shares, after)
    signed = np.where(way < 0, -shares, shares)
    filed = pd.to_datetime(df["filing_date"].replace("", None), errors="coerce") if "filing_date" in df else pd.NaT
    kind = df["filing_date_kind"].replace("", None) if "filing_date_kind" in df else None
    accession = df["accession_number"].replace("", None) if "accession_number" in df else None
    out = pd.DataFrame({"ticker": ticker, "filing_date": filed, "filing_date_kind": kind, "issuer": df["issuer_name"],
                        "name": df["reporting_owner"], "title": df["reporting_owner_position"].replace("", None),
                        "is_board_director": pd.NA, "transaction_date": day, "transaction_shares": signed,
                        "transaction_price_per_share": price, "transaction_value": shares * price,
                        "shares_owned_before_transaction": (after - signed).where(way != 0),
                        "shares_owned_after_transaction": after, "security_title": None,
                        "transaction_type": code.map(_CODES).fillna(code), "accession_number": accession,
                        "form_type": "4", "owner_cik": df["reporting_owner_cik"]})  # fmt: skip
    key = ["ticker", "owner_cik", "transaction_date", "transaction_type", "transaction_shares",
           "transaction_price_per_share", "shares_owned_after_transaction"]  # fmt: skip
    repeated = out.duplicated(key)  # one filing under a company's old and new symbol
    counts["repeated"] = int(repeated.sum())
    out = out[~repeated]
    counts["direction_unknown"] = int((way[~repeated.to_numpy()] == 0).sum())
    return out.drop(columns="owner_cik").reset_index(drop=True), counts


def merge_trades(filed: pd.DataFrame, form4: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """The parsed filings' trades plus the Form 4 table's rows they do not already hold.

    A Form 4 row is the same transaction as a filed one where ticker, day, insider, type, signed shares, price and
    holding after agree; the filed row (with its filing date and accession) is kept.

    Args:
        filed: :func:`build_insiders` trades.
        form4: :func:`build_form4_trades` rows.

    Returns:
        Both by ticker: the filed rows by filing date and accession, then the Form 4 rows newest transaction first;
        and the number of Form 4 rows dropped as already filed.
    """
    key = ["ticker", "transaction_date", "name", "transaction_type", "transaction_shares",
           "transaction_price_per_share", "shares_owned_after_transaction"]  # fmt: skip

    def keys(df: pd.DataFrame) -> pd.Series:
        k = df[key].assign(transaction_date=pd.to_datetime(df["transaction_date"]), name=df["name"].str.upper())
        return pd.Series(list(k.itertuples(index=False, name=None)), index=df.index)

    seen = keys(form4).isin(set(keys(filed)))
    filed = filed.assign(filing_date=pd.to_datetime(filed["filing_date"]))
    # a ticker's rows newest filing first (undated ones last), then newest transaction, as the service answers
    both = pd.concat([filed, form4[~seen]], ignore_index=True)
    order = ["ticker", "filing_date", "transaction_date", "name"]
    both = both.sort_values(order, ascending=[True, False, False, True], na_position="last", kind="stable")
    return both.reset_index(drop=True), int(seen.sum())


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
                        "accession_number": df["accession"].to_numpy(), "form_type": FORM13F_TYPE,
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
        form_type=("form_type", "first"),
        name_of_issuer=("name_of_issuer", "first"),
        cusip=("cusip", "first"),
        title_of_class=("title_of_class", "first"),
    )
    out["price"] = out["market_value"] / out["shares"]
    return out.sort_values(["ticker", "report_period", "investor"]).reset_index(drop=True)


def _insiders(ctx: Context) -> dict[str, pd.DataFrame]:
    df = pd.read_csv(ctx.source(FORM345), dtype=str)
    trades, holdings = build_insiders(df, ctx["filings_index"], signature_dates(ctx.glob(RAW_DOCUMENTS)))
    raw = pd.read_csv(ctx.source(FORM4), dtype=str, keep_default_na=False)
    seen = pd.read_csv(ctx.source(FIRST_SEEN))
    index = pd.read_csv(ctx.source(SEC_2024Q3), dtype=str)
    dated = with_filing_dates(raw, seen, index)
    # an accession the lake's filings list under another company (a Form 4 its filer filed as an owner) is left off
    theirs = dict(zip(ctx["filings_index"]["accessionNumber"], ctx["filings_index"]["ticker"], strict=True))
    other = [theirs.get(a, t) != t for a, t in zip(dated["accession_number"], dated["ticker"], strict=True)]
    dated.loc[other, "accession_number"] = ""
    form4, _ = build_form4_trades(dated, ctx["index_membership"])
    trades, _ = merge_trades(trades, form4)
    return {"insider_trades": trades, "insider_ownership": holdings}


def _institutional(ctx: Context) -> dict[str, pd.DataFrame]:
    df = pd.read_csv(ctx.source(FORM13F), dtype=str)
    tickers = pd.read_csv(ctx.source(SEC_TICKERS), dtype=str)
    return {"institutional_ownership": build_institutional(df, tickers, ctx["prices"], ctx["splits"])}


_PROVENANCE_TRADES = Provenance(
    "insider/form345_transactions_parsed.csv, insider/raw/*.xml, insider/insider_filings_index_*.csv; "
    f"{R2}insider/form4_nonderiv_transactions_sp500_2022_2026.csv.gz (Form 4 table I rows parsed by "
    "kenny-hk/sec-form4-api @a95e4465f0d7, MIT)",
    SEC_PD,
    "transaction rows of the parsed filings (22 rows, 6 tickers): filing date from the EDGAR index, else the "
    "signature date, else the period of report; shares negative for dispositions. Plus the Form 4 table's "
    "89,655 rows (785 symbols as filed): 98 without a listed symbol (NONE 77, N/A 21: non-traded funds) are left "
    "out, 0 repeat another row of the same company (owner CIK, day, code, shares, price, holding after), 1 is a "
    "transaction of the parsed filings (AAPL 2022-05-04), kept once as filed; 89,556 rows added: 89,578 rows, 764 "
    "tickers. Values as the table gives them: issuer, name, title (the owner's position; null where empty), "
    "transaction day, shares, price (null where empty), holding after; transaction_value = shares x price; "
    "transaction_type = the code's name; form_type 4. Tickers in the lake's spelling (BRK.B -> BRK-B) and served "
    "under the company's ticker of today through the index membership spells (FB -> META, BK -> BNY, MMC -> MRSH, "
    "PEAK -> DOC, PARA -> SKYD, SATS -> ECHO, ...); garbled symbols and renames the spells lack reviewed by hand "
    "(refdata/ownership.py FORM4_SYMBOLS: '-' -> HON, FN (DoorDash) -> DASH, FI -> FISV, NLOK -> GEN; the "
    "BlackRock New York Municipal Income Trust's row under BNY -> BNY_2024): 1,088 rows served under another "
    "symbol than filed. Direction (the table has no acquired/disposed flag): codes A C L M P X acquired, D F S U "
    "disposed; the two-way codes G I J W (4,236 rows) by the owner's previous row (its holding after plus or minus "
    "the shares is this row's) or a holding after below the shares (a disposition)",
    "the Form 4 table has no filing date, accession number, security title, director flag or derivative table. "
    "Filing dates come from data-real-6 (insider-form4-filing-dates, refdata/form4_dates.py): a transaction "
    "the source's daily run first saw was filed the day before (exact: 209 of 211 equal the SEC's dates), one its "
    "1-3 month backfills saw was filed by the window's end (upper_bound, a point-in-time date that never looks "
    "ahead), and the SEC's Form 3/4/5 index of 2024Q3 dates exactly (with the accession where one filing fits) the "
    "trades of its quarter whose issuer's filings for the day share one date; a date more than 90 days after the "
    "transaction or before it is not served (implausible); filing_date_kind says which. The first-seen table's "
    "transactions the Form 4 table lost (overwritten at the source's HEAD) are added. Rows without a date are "
    "served after the dated ones of a ticker (a filing-date filter leaves them out); 2,453 rows of two-way codes "
    "have no known direction: their shares are positive and shares_owned_before_transaction is null. Coverage is "
    "incomplete (about 15-27k rows a year 2022-2024, fewer after; the source's quarterly files were partly "
    "overwritten); one TMUS row dated 2028-05-24 and a few before 2022 are the source's. CDAY and FLT rows follow "
    "the membership spells to DAY_2024 and CPAY_2024, apart from DAY and CPAY",
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
    "13F reports them; form_type = 13F-HR: the source lists its tables as those of 13F-HR filings (data-real "
    "SOURCES.md, section d: 'Parsed 13F-HR information tables') and names no 13F-HR/A among them (the tables "
    "themselves carry no form); /institutional-holdings serves these rows in the 2026 shape",
)

INSIDERS = Stage(
    "insiders",
    "Insider trades (Form 4) and holdings (Forms 3 and 5)",
    _insiders,
    sources=(FORM345, RAW_DOCUMENTS, FORM4, FIRST_SEEN, SEC_2024Q3),
    needs=("filings_index", "index_membership"),
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
