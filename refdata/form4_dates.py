"""Filing dates of the Form 4 table's transactions: exact where a source fixes them, else a conservative bound.

The Form 4 table (data-real-2, flattened from kenny-hk/sec-form4-api) has no filing date. data-real-6 gives one
from the history of that same source (:data:`FIRST_SEEN`): a transaction first seen in a daily run (which fetched
the filings of the day before and that day) was filed the day before, ``exact``; one first seen in a backfill of a
1-3 month window was filed on or before the window's end, its ``upper_bound`` (a point-in-time date that never
looks ahead); and the SEC's own Form 3/4/5 index of 2024Q3 (:data:`SEC_2024Q3`) dates every filing of that quarter
exactly, where an issuer's filings for the transaction's day share one filing date.

A date that breaks the Form 4 deadline by far (filed more than :data:`MAX_LAG_DAYS` after the transaction, or
before it) is no filing date of that transaction: the row keeps none (its ``filing_date_kind`` says why).

Example:
    >>> seen = pd.DataFrame({"ticker": ["A"], "reporting_owner": ["X"], "transaction_date": ["2025-05-01"],
    ...     "transaction_type": ["S"], "transaction_shares": [10.0], "transaction_price": [5.0],
    ...     "shares_after_transaction": [90.0], "seen_via": ["daily_run"], "filing_date_inferred": ["2025-05-03"],
    ...     "filing_window_start": [None], "filing_window_end": [None]})
    >>> first_seen_dates(seen)[["filing_date", "filing_date_kind"]].values.tolist()
    [['2025-05-03', 'exact']]
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = [
    "BOUND",
    "EXACT",
    "FIRST_SEEN",
    "KEY",
    "SEC_2024Q3",
    "added_rows",
    "filing_dates_by_year",
    "first_seen_dates",
    "key_of",
    "sec_dates",
    "with_filing_dates",
]

FIRST_SEEN = "data-real-6/insider-form4-filing-dates/form4_transactions_first_seen_kenny-hk_2022_2026.csv.gz"
SEC_2024Q3 = "data-real-6/insider-form4-filing-dates/sec_form345_2024q3_form4_submissions.csv.gz"
EXACT, BOUND = "exact", "upper_bound"
#: a filing date more than this many days after the transaction is no filing date of it (the deadline is two
#: business days; late filings of a few weeks happen)
MAX_LAG_DAYS = 90
#: the transaction's identity in both tables (as the source's JSON gives it)
KEY = [
    "ticker",
    "reporting_owner",
    "transaction_date",
    "transaction_type",
    "transaction_shares",
    "transaction_price",
    "shares_after_transaction",
]


def key_of(df: pd.DataFrame) -> pd.Series:
    """One hashable key per row from the :data:`KEY` columns (text or numbers: numbers compared to 6 decimals).

    Example:
        >>> a = pd.DataFrame({"ticker": ["A"], "reporting_owner": [" X "], "transaction_date": ["2025-05-01"],
        ...     "transaction_type": ["S"], "transaction_shares": ["10.0"], "transaction_price": [""],
        ...     "shares_after_transaction": ["90"]})
        >>> b = a.assign(reporting_owner="X", transaction_shares=10, transaction_price=np.nan)
        >>> key_of(a).tolist() == key_of(b).tolist()
        True
    """
    parts = [
        df["ticker"].astype(str).str.strip(),
        df["reporting_owner"].astype(str).str.strip().str.upper(),
        df["transaction_date"].astype(str).str[:10],
        df["transaction_type"].astype(str).str.strip(),
    ]
    for col in KEY[4:]:
        number = pd.to_numeric(df[col].replace("", None), errors="coerce").astype("float64")
        parts.append(number.round(6).fillna(-1.0).astype(str))
    return pd.Series(list(zip(*parts, strict=True)), index=df.index)


def first_seen_dates(seen: pd.DataFrame) -> pd.DataFrame:
    """Each first-seen transaction's filing date (ISO text) and its kind: :data:`EXACT` or :data:`BOUND`.

    Args:
        seen: the first-seen table (:data:`FIRST_SEEN`).

    Returns:
        :data:`KEY`, ``filing_date``, ``filing_date_kind`` (rows of an unknown window have no date; a key seen
        twice keeps its first row).
    """
    daily = seen["seen_via"].eq("daily_run")
    date = np.where(daily, seen["filing_date_inferred"], seen["filing_window_end"])
    kind = np.where(daily, EXACT, BOUND)
    out = seen[KEY].assign(filing_date=date, filing_date_kind=kind)
    out = out[pd.notna(out["filing_date"])]
    return out[~key_of(out).duplicated()].reset_index(drop=True)


def added_rows(seen: pd.DataFrame) -> pd.DataFrame:
    """The first-seen transactions the Form 4 table lost (overwritten at its source's HEAD), in its text layout.

    Example:
        >>> seen = pd.DataFrame({"ticker": ["A", "B"], "issuer_name": "I", "reporting_owner": "X",
        ...     "reporting_owner_cik": [1564342.0, np.nan], "reporting_owner_position": [None, "CEO"],
        ...     "transaction_date": "2025-05-01", "transaction_type": "S", "transaction_shares": 10.0,
        ...     "transaction_price": [5.0, np.nan], "shares_after_transaction": 90.0,
        ...     "in_data_real_2_form4": [True, False]})
        >>> added_rows(seen)[["ticker", "reporting_owner_cik", "transaction_price"]].values.tolist()
        [['B', '', '']]
    """
    new = seen[~seen["in_data_real_2_form4"].astype(bool)]
    out = pd.DataFrame(index=new.index)
    for col in (
        "ticker",
        "issuer_name",
        "reporting_owner",
        "reporting_owner_position",
        "transaction_date",
        "transaction_type",
    ):
        out[col] = new[col].fillna("").astype(str)
    cik = pd.to_numeric(new["reporting_owner_cik"], errors="coerce")
    out["reporting_owner_cik"] = [f"{int(c):010d}" if c == c else "" for c in cik]
    for col in ("transaction_shares", "transaction_price", "shares_after_transaction"):
        v = pd.to_numeric(new[col], errors="coerce")
        out[col] = [repr(float(x)) if x == x else "" for x in v]
    return out.reset_index(drop=True)


def sec_dates(trades: pd.DataFrame, index: pd.DataFrame) -> pd.DataFrame:
    """The SEC index's filing date (and accession, where one filing fits) of trades of its quarter.

    A trade's filings are the index's Forms 4 and 4/A of its issuer's symbol with the trade's day as period of
    report; where they all have one filing date, that date is the trade's, exactly (the accession too where there
    is one filing).

    Args:
        trades: ``ticker`` (as filed), ``transaction_date``.
        index: :data:`SEC_2024Q3` (``accession_number``, ``filing_date``, ``period_of_report``,
            ``issuertradingsymbol``, ``document_type``).

    Returns:
        ``filing_date`` (ISO text or None) and ``accession_number`` (or None), aligned with ``trades``.

    Example:
        >>> idx = pd.DataFrame({"accession_number": ["a1", "a2"], "filing_date": ["2024-07-03", "2024-07-03"],
        ...     "period_of_report": ["2024-07-01"] * 2, "issuertradingsymbol": ["ABC"] * 2, "document_type": "4"})
        >>> t = pd.DataFrame({"ticker": ["ABC", "XYZ"], "transaction_date": ["2024-07-01", "2024-07-01"]})
        >>> sec_dates(t, idx).values.tolist()
        [['2024-07-03', None], [None, None]]
    """
    idx = index[index["document_type"].astype(str).isin(["4", "4/A"])]
    sym = idx["issuertradingsymbol"].astype(str).str.upper().str.replace(".", "-", regex=False)
    groups = idx.assign(sym=sym, day=idx["period_of_report"].astype(str).str[:10]).groupby(["sym", "day"])
    dates = groups["filing_date"].agg(_the_one_value)
    accessions = groups["accession_number"].agg(_the_only_row)
    key = pd.MultiIndex.from_arrays(
        [
            trades["ticker"].astype(str).str.upper().str.replace(".", "-", regex=False),
            trades["transaction_date"].astype(str).str[:10],
        ]
    )

    def plain(values: pd.Series) -> list[object]:
        return [None if pd.isna(v) else v for v in values.reindex(key)]

    return pd.DataFrame(
        {"filing_date": plain(dates), "accession_number": plain(accessions)}, index=trades.index, dtype=object
    )


def _the_one_value(s: pd.Series) -> object:
    return s.iloc[0] if s.nunique() == 1 else None


def _the_only_row(s: pd.Series) -> object:
    return s.iloc[0] if len(s) == 1 else None


def with_filing_dates(raw: pd.DataFrame, seen: pd.DataFrame, index: pd.DataFrame) -> pd.DataFrame:
    """The Form 4 table (text) plus the transactions it lost, each with ``filing_date``, its kind, an accession.

    Precedence: the SEC index (exact), then the first-seen table (exact or a bound); a date more than
    :data:`MAX_LAG_DAYS` after the transaction, or before it, is dropped (kind ``implausible``).

    Args:
        raw: the Form 4 table as text.
        seen: :data:`FIRST_SEEN`.
        index: :data:`SEC_2024Q3`.

    Returns:
        ``raw``'s rows then the added ones, with ``filing_date`` (ISO text or ""), ``filing_date_kind`` (or "")
        and ``accession_number`` (or "").
    """
    both = pd.concat([raw, added_rows(seen)], ignore_index=True).fillna("")
    dates = first_seen_dates(seen)
    by_key = dict(zip(key_of(dates), zip(dates["filing_date"], dates["filing_date_kind"], strict=True), strict=True))
    found = [by_key.get(k, ("", "")) for k in key_of(both)]
    both["filing_date"] = [d for d, _ in found]
    both["filing_date_kind"] = [k for _, k in found]
    sec = sec_dates(both, index)
    hit = sec["filing_date"].notna().to_numpy()
    both.loc[hit, "filing_date"] = sec.loc[hit, "filing_date"].to_numpy()
    both.loc[hit, "filing_date_kind"] = EXACT
    both["accession_number"] = sec["accession_number"].fillna("").to_numpy()
    filed = pd.to_datetime(both["filing_date"].replace("", None), errors="coerce")
    day = pd.to_datetime(both["transaction_date"].astype(str).str[:10], errors="coerce")
    lag = (filed - day).dt.days
    odd = filed.notna() & ((lag < 0) | (lag > MAX_LAG_DAYS))
    both.loc[odd, "filing_date"] = ""
    both.loc[odd, "filing_date_kind"] = "implausible"
    return both


def filing_dates_by_year(trades: pd.DataFrame) -> list[str]:
    """The ``SOURCES.md`` section: insider trades by transaction year and what their filing date is.

    Example:
        >>> t = pd.DataFrame({"transaction_date": pd.to_datetime(["2024-07-01", "2024-08-01"]),
        ...                   "filing_date_kind": ["exact", None]})
        >>> [r for r in filing_dates_by_year(t) if r.startswith("| 2024")]
        ['| 2024 | 2 | 1 | 0 | 0 | 1 |']
    """
    kind = trades["filing_date_kind"].astype("string").fillna("none")
    year = trades["transaction_date"].dt.year
    lines = [
        "## Insider trades: filing dates by year",
        "",
        "Rows of `insider_trades` by transaction year and what their `filing_date` is (`filing_date_kind`): "
        "exact, an upper bound (filed on or before it), a lower bound (a signature date), or none (no "
        "source dates it, or its date broke the Form 4 deadline by months: implausible, not served).",
        "",
        "| year | rows | exact | upper bound | lower bound | none or implausible |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for y in sorted(year.dropna().unique()):
        k = kind[year == y]
        counts = [
            int((k == EXACT).sum()),
            int((k == BOUND).sum()),
            int((k == "lower_bound").sum()),
            int(k.isin(["none", "implausible"]).sum()),
        ]
        lines.append(f"| {int(y)} | {len(k):,} | " + " | ".join(f"{c:,}" for c in counts) + " |")
    return [*lines, ""]
