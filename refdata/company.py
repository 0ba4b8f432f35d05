"""Company facts: the universe's companies (SEC profile, employees, market cap) and the other S&P 500 members."""

from __future__ import annotations

import html
import re

import numpy as np
import pandas as pd

from refdata.common import company_ciks, tuples
from refdata.concepts import SEC
from refdata.identity import renames_of, reviewed_renames
from refdata.index_membership import EVENTS, FOLDER, INDICES
from refdata.stage import Context, Provenance, Stage, dataset, intermediate

UNIVERSE = "data-real/company/universe.csv"
PROFILES = "data-real/company/sec_entity_profiles_AAPL_MSFT_NVDA_TSLA.csv"
EMPLOYEES = "data-real/company/employees_from_10k.csv"
SEC_TICKERS = "data-real/company/sec_company_tickers.csv"
#: ticker changes: the symbol events of data-real-4 and the membership files' "rename -> NEW" removals
MEMBERSHIP_CHANGES = tuple(f"{FOLDER}/{index}_changes.csv" for index in INDICES)


#: a share count reported this long before the last close gives no market cap (a 2010 count of the FSDS beside a
#: 2026 close; the 2015-2017 counts of the long-history names, 9 years before, are still taken)
STALE_COUNT = pd.Timedelta(days=10 * 365)


def build_company_facts(
    uni: pd.DataFrame,
    prof: pd.DataFrame,
    emp: pd.DataFrame,
    ciks: dict[str, str],
    statements: pd.DataFrame,
    daily: pd.DataFrame,
    members: pd.DataFrame,
    renames: pd.DataFrame,
) -> pd.DataFrame:
    """The universe's companies, then the other S&P 500 members (name, CIK, sector, industry, location).

    ``market_cap`` = last close x the last reported shares outstanding (the weighted average where none is
    reported), both on the lake's split basis.

    Args:
        uni: ``company/universe.csv`` (text).
        prof: the SEC entity profiles (text), indexed by ticker.
        emp: employees from the 10-Ks (text), indexed by ticker.
        ciks: ticker -> CIK.
        statements: the statement table (shares outstanding).
        daily: the daily bars (last close).
        members: the S&P 500 members.
        renames: every known ticker change (:func:`refdata.identity.renames_of`).

    Returns:
        One row per company.
    """
    uni = uni.copy()
    uni["Symbol"] = uni["Symbol"].str.replace(".", "-", regex=False)  # BRK.B is BRK-B everywhere in the lake
    last_close = daily.sort_values("time").groupby("ticker", observed=True)["close"].last()
    last_close.index = last_close.index.astype(str)
    q = statements[statements["period"] != "ttm"].sort_values("report_period")
    rows = []

    last_day = daily.groupby("ticker", observed=True)["time"].max()
    last_day.index = last_day.index.astype(str)

    def shares_of(t: str) -> float:
        st = q[q["ticker"] == t]
        if t in last_day.index:  # a count reported long before the last close is no count of that day
            st = st[st["report_period"] >= last_day[t].tz_localize(None) - STALE_COUNT]
        for col in ("outstanding_shares", "weighted_average_shares"):
            v = st[col].dropna() if col in st.columns else pd.Series(dtype=float)
            if len(v):
                return float(v.iloc[-1])
        return np.nan

    for u in tuples(uni):
        t = u.Symbol
        p = prof.loc[t] if t in prof.index else None
        cik = ciks.get(t)
        shares_v = shares_of(t)
        price = last_close.get(t, np.nan)
        employees = emp.loc[t, "employees"] if t in emp.index else u.employees
        rows.append({
            "ticker": t, "name": (p["name"] if p is not None else None) or u.Security,
            "cik": cik, "industry": u._4, "sector": u._3, "category": "Common Stock" if u.asset_class == "equity"
            else "Cryptocurrency", "exchange": p["exchanges"] if p is not None else None,
            "is_active": True, "listing_date": None, "location": u._5 if isinstance(u._5, str) else None,
            "market_cap": float(price * shares_v) if price == price and shares_v == shares_v else None,
            "number_of_employees": int(float(employees)) if isinstance(employees, str) and employees else None,
            "sec_filings_url": f"{SEC}/cgi-bin/browse-edgar?action=getcompany&CIK={cik}" if cik else None,
            "sic_code": p["sic"] if p is not None else None,
            "sic_industry": p["sic_description"] if p is not None else None,
            "sic_sector": None, "website_url": None, "weighted_average_shares": shares_v,
            "events": ticker_changes(t, renames),
            "former_names": former_names(p["former_names"] if p is not None else None),
        })  # fmt: skip
    known = {r["ticker"] for r in rows}
    for m in tuples(members):
        if m.ticker in known:
            continue
        cik = ciks.get(m.ticker, m.cik)  # the filer of the lake's filings (company_ciks)
        rows.append({"ticker": m.ticker, "name": m.name, "cik": cik, "industry": m.industry, "sector": m.sector,
                     "category": "Common Stock", "is_active": True, "location": m.location,
                     "sec_filings_url": f"{SEC}/cgi-bin/browse-edgar?action=getcompany&CIK={cik}",
                     "events": ticker_changes(m.ticker, renames), "former_names": []})  # fmt: skip
    return pd.DataFrame(rows)


def ticker_changes(ticker: str, renames: pd.DataFrame) -> list[dict[str, str | None]]:
    """The ticker changes that led to ``ticker``, oldest first, as ``ticker_change`` events.

    Walks back from today's symbol: the rename to it, the rename to the symbol before, ... (each earlier than the
    one after it, so a reused symbol never pulls in another company's history).

    Args:
        ticker: the company's symbol today (lake spelling).
        renames: ``day``, ``old``, ``new`` (:func:`refdata.identity.renames_of`).

    Returns:
        ``{type: "ticker_change", date, ticker, previous_ticker}`` per change.

    Example:
        >>> renames = pd.DataFrame({"day": pd.to_datetime(["2022-06-09"]), "old": ["FB"], "new": ["META"]})
        >>> ticker_changes("META", renames)
        [{'type': 'ticker_change', 'date': '2022-06-09', 'ticker': 'META', 'previous_ticker': 'FB'}]
    """
    out: list[dict[str, str | None]] = []
    symbol, before = ticker, pd.Timestamp.max
    while True:
        hits = renames[(renames["new"] == symbol) & (renames["day"] < before)]
        if hits.empty or len(out) > 20:
            return out[::-1]
        hit = hits.iloc[-1]  # the latest rename to this symbol before the change after it
        out.append({"type": "ticker_change", "date": hit["day"].strftime("%Y-%m-%d"), "ticker": symbol,
                    "previous_ticker": hit["old"]})  # fmt: skip
        symbol, before = hit["old"], hit["day"]


def former_names(listed: object) -> list[dict[str, str | None]]:
    """The names the SEC lists a company under before its current one, with the dates each was in use.

    Not events: the spec's ``events`` are ticker changes, so former names have a field of their own
    (``former_names``, an fdkit extension).

    Args:
        listed: the SEC profile's ``former_names`` (``APPLE INC (2007-01-10..2019-08-05)|...``; missing for
            companies without a profile).

    Returns:
        ``{name, start_date, end_date}`` per name, in the profile's order.

    Example:
        >>> former_names("APPLE COMPUTER INC (1994-01-26..2007-01-04)")
        [{'name': 'APPLE COMPUTER INC', 'start_date': '1994-01-26', 'end_date': '2007-01-04'}]
    """
    names: list[dict[str, str | None]] = []
    for part in str(listed).split("|") if isinstance(listed, str) else []:
        m = re.match(r"^(.*?)\s*\((\d{4}-\d{2}-\d{2})?\.\.(\d{4}-\d{2}-\d{2})?\)$", part.strip())
        if m:
            names.append({"name": m.group(1), "start_date": m.group(2), "end_date": m.group(3)})
    return names


def known_companies(uni: pd.DataFrame, prof: pd.DataFrame, ciks: dict[str, str], members: pd.DataFrame) -> pd.DataFrame:
    """The companies the lake knows today, named and numbered as its company facts are: universe, then members.

    Args:
        uni: ``company/universe.csv`` (text).
        prof: the SEC entity profiles (text), indexed by ticker.
        ciks: ticker -> CIK (:func:`refdata.common.company_ciks`).
        members: the S&P 500 members (``ticker``, ``name``, ``cik``).

    Returns:
        ``ticker``, ``name``, ``cik``, one row per ticker.

    Example:
        >>> uni = pd.DataFrame({"Symbol": ["BRK.B"], "Security": ["Berkshire Hathaway"]})
        >>> members = pd.DataFrame({"ticker": ["BRK-B", "X"], "name": ["Berkshire", "X Inc."], "cik": ["1", "2"]})
        >>> known_companies(uni, pd.DataFrame(), {"BRK-B": "0001067983"}, members).values.tolist()
        [['BRK-B', 'Berkshire Hathaway', '0001067983'], ['X', 'X Inc.', '2']]
    """
    rows = []
    for u in tuples(uni.assign(Symbol=uni["Symbol"].str.replace(".", "-", regex=False))):
        p = prof.loc[u.Symbol] if u.Symbol in prof.index else None
        rows.append({"ticker": u.Symbol, "name": (p["name"] if p is not None else None) or u.Security,
                     "cik": ciks.get(u.Symbol)})  # fmt: skip
    known = {r["ticker"] for r in rows}
    rows += [{"ticker": m.ticker, "name": m.name, "cik": ciks.get(m.ticker, m.cik)} for m in tuples(members)
             if m.ticker not in known]  # fmt: skip
    return pd.DataFrame(rows, columns=["ticker", "name", "cik"])


def _companies(ctx: Context) -> dict[str, pd.DataFrame]:
    uni = pd.read_csv(ctx.source(UNIVERSE), dtype=str)
    prof = pd.read_csv(ctx.source(PROFILES), dtype=str).set_index("ticker")
    ciks = company_ciks(pd.read_csv(ctx.source(SEC_TICKERS), dtype=str), ctx["members"], uni)
    return {"companies": known_companies(uni, prof, ciks, ctx["members"])}


def _company_facts(ctx: Context) -> dict[str, pd.DataFrame]:
    uni = pd.read_csv(ctx.source(UNIVERSE), dtype=str)
    prof = pd.read_csv(ctx.source(PROFILES), dtype=str).set_index("ticker")
    emp = pd.read_csv(ctx.source(EMPLOYEES), dtype=str).set_index("ticker")
    members = ctx["members"]
    ciks = company_ciks(pd.read_csv(ctx.source(SEC_TICKERS), dtype=str), members, uni)
    events = pd.read_csv(ctx.source(EVENTS), dtype=str, keep_default_na=False)
    changes = [pd.read_csv(ctx.source(f), dtype=str, keep_default_na=False) for f in MEMBERSHIP_CHANGES]
    facts = build_company_facts(uni, prof, emp, ciks, ctx["statements"], ctx["prices"], members,
                                renames_of(events, changes))  # fmt: skip
    return {"company_facts": with_past_members(facts, ctx["pystock_owners"], ctx["index_membership"])}


def with_past_members(facts: pd.DataFrame, owners: pd.DataFrame, spells: pd.DataFrame | None = None) -> pd.DataFrame:
    """Company facts for the companies of the 2015-2017 cross-section that today's lists do not name.

    Their name is the one they listed under last, their CIK where a membership spell gives one; whether they still
    trade, their sector and market cap are in no source here, so they are missing (never guessed). A company with a
    CIK (a spell still running: today's S&P 400 or 600 member) is named as its latest spell names it, today's name
    (Edgewell Personal Care, which listed as Energizer Holdings until its 2015 rename).

    Args:
        facts: the company facts of today's companies.
        owners: the pystock listings' owners (``ticker``, ``name``, ``cik``, ``end``).
        spells: the index-membership spells (``name``, ``cik``, ``start_date``), for today's names.

    Returns:
        ``facts`` with a row for each owner ticker it lacks.

    Example:
        >>> facts = pd.DataFrame({"ticker": ["AAPL"], "name": ["Apple Inc."], "cik": ["0000320193"]})
        >>> owners = pd.DataFrame({"ticker": ["AABA", "AABA"], "name": ["Yahoo Inc", "Yahoo! Inc."],
        ...                        "cik": [None, None], "end": pd.to_datetime(["2016-01-01", "2017-04-30"])})
        >>> with_past_members(facts, owners)[["ticker", "name"]].values.tolist()
        [['AAPL', 'Apple Inc.'], ['AABA', 'Yahoo! Inc.']]
    """
    known = set(facts["ticker"].astype(str))
    past = owners[~owners["ticker"].astype(str).isin(known)].sort_values("end").groupby("ticker", sort=True).last()
    names = past["name"].map(html.unescape)
    ciks = past["cik"]
    if spells is not None:
        named = spells.dropna(subset=["cik", "name"]).sort_values("start_date", kind="stable")
        today = named.groupby(named["cik"].astype(str))["name"].last()
        names = past["cik"].map(lambda c: today.get(str(c)) if isinstance(c, str) else None).fillna(names)
        # a company served under the symbol a reviewed rename gave it (Rent-A-Center, now UPBD): its latest
        # spell's name and CIK (other past members keep the name they listed under)
        latest = spells.dropna(subset=["name"]).sort_values("start_date", kind="stable")
        latest = latest.groupby(latest["current_ticker"].astype(str)).last()
        own = pd.Series(past.index.astype(str), index=past.index)
        renamed = own.isin({new for _, _, new in reviewed_renames()}) & past["cik"].isna()
        names = own.map(latest["name"]).where(renamed & own.map(latest["name"]).notna(), names)
        ciks = past["cik"].where(~renamed, past["cik"].fillna(own.map(latest["cik"])))
    rows = pd.DataFrame({"ticker": past.index.astype(str), "name": names.astype(str).to_numpy(),
                         "cik": ciks.to_numpy(), "category": "Common Stock"})  # fmt: skip
    return pd.concat([facts, rows], ignore_index=True)


_PROVENANCE = Provenance(
    "company/universe.csv, company/sec_entity_profiles_AAPL_MSFT_NVDA_TSLA.csv, company/employees_from_10k.csv",
    "S&P 500 constituents ODC-PDDL-1.0; SEC data public domain",
    "Companies of the 2015-2017 cross-section that today's lists do not name (acquired, renamed, delisted): the "
    "name they listed under last in the pystock symbols file (today's name from the membership list where a spell "
    "still runs), the CIK a membership spell gives, nothing else. "
    "GICS sector/sub-industry, HQ, CIK; SIC and exchange where the SEC profile is bundled; market cap = last "
    "close x the latest shares outstanding (else weighted shares), both on the split basis; events: the "
    "company's ticker changes as the spec shapes them ({type: ticker_change, date, ticker = the symbol from that "
    "day}, with previous_ticker, an extension), walked back from today's symbol through the ticker_change rows of "
    "data-real-4's us_symbol_events.csv and the membership files' 'rename -> NEW' removals (FB -> META 2022-06-09); "
    "former_names (an extension, not events): the SEC former names ({name, start_date, end_date}) where a profile "
    "is bundled. The other S&P 500 members (company/sp500_constituents.csv) with name, CIK, "
    "sector, industry and location. Class shares are spelled with a dash (BRK-B) everywhere.",
)

COMPANY_FACTS = Stage(
    "company_facts",
    "Company facts of the universe, the other S&P 500 members and the 2015-2017 S&P 1500 members",
    _company_facts,
    sources=(UNIVERSE, PROFILES, EMPLOYEES, SEC_TICKERS, EVENTS, *MEMBERSHIP_CHANGES),
    needs=("statements", "prices", "members", "pystock_owners", "index_membership"),
    outputs=(dataset("company_facts", _PROVENANCE),),
)

COMPANIES = Stage(
    "companies",
    "The companies known today (ticker, name, CIK) as company facts name them, for the membership spells",
    _companies,
    sources=(UNIVERSE, PROFILES, SEC_TICKERS),
    needs=("members",),
    outputs=(intermediate("companies"),),
)

STAGES = (COMPANIES, COMPANY_FACTS)
