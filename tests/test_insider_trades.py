"""insider_trades: the Form 4 table of ../shared/data-real-2 in the lake, checked against the raw file read with plain
pandas, and the mapping rules (served tickers, direction, repeated rows) on frames written here."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import fdkit
from fdkit.lake.io import default_data_dir, read_dataset
from refdata.ownership import build_form4_trades, merge_trades, served_symbols

DATA = default_data_dir()
RAW = Path(__file__).resolve().parents[2] / "shared" / "data-real-2" / "insider"
RAW = RAW / "form4_nonderiv_transactions_sp500_2022_2026.csv.gz"
FIRST_SEEN = (
    RAW.parents[2]
    / "data-real-6"
    / "insider-form4-filing-dates"
    / ("form4_transactions_first_seen_kenny-hk_2022_2026.csv.gz")
)
needs_raw = pytest.mark.skipif(not RAW.exists(), reason="../shared/data-real-2 is not beside this clone")

NAMES = {
    "S": "Sale",
    "P": "Purchase",
    "A": "Grant",
    "M": "Option Exercise",
    "F": "Tax Withholding",
    "G": "Gift",
    "D": "Disposition to Issuer",
    "C": "Conversion",
    "J": "Other",
    "X": "Option Exercise",
    "L": "Small Acquisition",
    "I": "Discretionary",
    "U": "Tender of Shares",
    "W": "Will or Laws of Descent",
}
#: symbols served under another ticker (renames, reuse, typos: see SOURCES.md); the sample leaves them out
MOVED = {
    "NONE",
    "FB",
    "BK",
    "BNY",
    "MMC",
    "PEAK",
    "PARA",
    "PSKY",
    "SATS",
    "BLL",
    "ABC",
    "ANTM",
    "CDAY",
    "FLT",
    "PKI",
    "FI",
    "NLOK",
    "RBT",
    "FN",
    "ISGR",
    "OMCV",
    "BRKB",
}


@pytest.fixture(scope="module")
def raw() -> pd.DataFrame:
    return pd.read_csv(RAW)  # plain pandas, its own dtypes


@pytest.fixture(scope="module")
def lake() -> pd.DataFrame:
    return read_dataset(DATA, "insider_trades")


@needs_raw
def test_every_row_with_a_symbol_is_in_the_lake(raw, lake):
    form4 = lake[lake["security_title"].isna()]  # the parsed filings all name their security
    no_symbol = raw["ticker"].isin(["NONE"]) | raw["ticker"].isna()  # plain pandas reads "N/A" as missing
    assert no_symbol.sum() == 98
    # the transactions data-real-6's history of the same source saw and the table lost (42 without a symbol, two
    # a repeat of another row of the same company)
    seen = pd.read_csv(FIRST_SEEN)
    lost = seen[~seen["in_data_real_2_form4"]]
    lost_with_symbol = (~lost["ticker"].isin(["NONE"]) & lost["ticker"].notna()).sum()
    assert len(form4) == len(raw) - no_symbol.sum() - 1 + lost_with_symbol - 2  # one AAPL row is a parsed one's
    assert len(lake) == 115_252 and lake["ticker"].nunique() == 764  # as data/SOURCES.md says (RE is EG's)
    assert (form4["form_type"] == "4").all()
    # an accession only where the SEC's index of 2024Q3 has one filing for the issuer and day
    accession = form4["accession_number"].dropna()
    assert accession.str.fullmatch(r"\d{10}-\d{2}-\d{6}").all() and 1000 < len(accession) < 3000
    assert not lake["ticker"].astype(str).str.contains(r"[.\]/,#a-z]|^-$").any()  # the lake's spelling only
    assert {"BRK-A", "BRK-B"} <= set(lake["ticker"]) and "BRK.B" not in set(lake["ticker"])
    for t, n in {"JPM": 258 + 102, "META": 644 + 237, "WMT": 577 + 281}.items():  # META: 620 filed as META, 24 FB
        both = [raw["ticker"], lost["ticker"]]
        assert (lake["ticker"] == t).sum() == n == sum(x.isin([t, "FB"] if t == "META" else [t]).sum() for x in both)


@needs_raw
def test_a_sample_of_rows_is_copied_exactly(raw, lake):
    keep = ~raw["ticker"].isin(MOVED) & raw["ticker"].str.fullmatch(r"[A-Z]+(\.[A-Z])?", na=False)
    sample = pd.concat([raw[raw["ticker"].isin(["JPM", "META", "WMT"])], raw[keep].sample(400, random_state=7)])
    day = pd.to_datetime(sample["transaction_date"].str[:10])
    by = {k: g for k, g in lake.groupby(["ticker", "transaction_date", "name"], observed=True)}
    for (_, r), d in zip(sample.iterrows(), day, strict=True):
        rows = by[(r["ticker"].replace(".", "-"), d, r["reporting_owner"])]
        hit = rows[
            (rows["transaction_shares"].abs() == r["transaction_shares"])
            & (rows["transaction_type"] == NAMES[r["transaction_type"]])
            & (
                (rows["transaction_price_per_share"] == r["transaction_price"])
                | (rows["transaction_price_per_share"].isna() & pd.isna(r["transaction_price"]))
            )
            & (
                (rows["shares_owned_after_transaction"] == r["shares_after_transaction"])
                | (rows["shares_owned_after_transaction"].isna() & pd.isna(r["shares_after_transaction"]))
            )
        ]
        assert len(hit) == 1, r.to_dict()
        h = hit.iloc[0]
        assert h["issuer"] == r["issuer_name"]
        assert (pd.isna(h["title"]) and pd.isna(r["reporting_owner_position"])) or h["title"] == r[
            "reporting_owner_position"
        ]
        sign = {"S": -1, "F": -1, "D": -1, "U": -1, "A": 1, "P": 1, "M": 1, "X": 1, "C": 1, "L": 1}
        if r["transaction_type"] in sign and r["transaction_shares"]:
            assert np.sign(h["transaction_shares"]) == sign[r["transaction_type"]]
        if pd.notna(h["shares_owned_before_transaction"]):
            before = r["shares_after_transaction"] - h["transaction_shares"]
            assert h["shares_owned_before_transaction"] == pytest.approx(before)
        if pd.notna(r["transaction_price"]):
            assert h["transaction_value"] == pytest.approx(r["transaction_shares"] * r["transaction_price"])


@needs_raw
def test_jpm_meta_wmt_through_the_embedded_server():
    for t, n in {"JPM": 360, "META": 881, "WMT": 858}.items():
        df = fdkit.insider_trades(t, limit=None)
        assert len(df) == n and (df.index.get_level_values("ticker") == t).all()
    newest = fdkit.insider_trades("JPM", limit=3)  # the service answers the newest filings first
    every = fdkit.insider_trades("JPM", limit=None).index.get_level_values("filing_date").dropna()
    filed = newest.index.get_level_values("filing_date")
    assert sorted(filed) == sorted(every)[-3:] and filed.max() >= pd.Timestamp("2026-08-01")


# ------------------------------------------------------------------------------------------------------------------
# the rules, on frames written here
# ------------------------------------------------------------------------------------------------------------------
MEMBERS = pd.DataFrame(
    {
        "ticker": ["FB", "META", "DOC", "DOC"],
        "current_ticker": ["META", "META", "DOC_2024", "DOC"],
        "start_date": pd.to_datetime(["2013-12-23", "2022-06-09", "2020-05-18", "2024-03-01"]),
        "end_date": pd.to_datetime(["2022-06-08", None, "2024-02-29", None]),
    }
)


def _raw(rows: list[tuple]) -> pd.DataFrame:
    cols = [
        "ticker",
        "issuer_name",
        "reporting_owner",
        "reporting_owner_cik",
        "reporting_owner_position",
        "transaction_date",
        "transaction_type",
        "transaction_shares",
        "transaction_price",
        "shares_after_transaction",
    ]
    return pd.DataFrame(rows, columns=cols)


def test_symbols_are_served_under_todays_ticker():
    sym = pd.Series(["FB", "FB", "DOC", "DOC", "AAPL"])
    day = pd.Series(pd.to_datetime(["2022-01-03", "2022-07-01", "2023-01-03", "2024-05-01", "2024-01-02"]))
    assert served_symbols(sym, day, MEMBERS).tolist() == ["META", "META", "DOC_2024", "DOC", "AAPL"]


def test_directions_repeats_and_symbols():
    raw = _raw(
        [
            ("FB", "Meta", "Z", "01", "", "2022-01-03", "S", "10.0", "300.0", "90.0"),
            ("META", "Meta", "Z", "01", "", "2022-01-03", "S", "10.0", "300.0", "90.0"),  # the same filing, new symbol
            ("META", "Meta", "Z", "01", "CEO", "2022-07-01", "G", "5.0", "0.0", "85.0"),  # 90 - 5: given
            ("META", "Meta", "Z", "01", "CEO", "2022-08-01", "J", "5.0", "", "90.0"),  # 85 + 5: received
            ("META", "Meta", "Y", "02", "", "2022-08-01", "G", "50.0", "0.0", "10.0"),  # holds less than it moved
            ("META", "Meta", "X", "03", "", "2022-08-01", "G", "50.0", "0.0", "70.0"),  # no telling
            ("NONE", "A private fund", "W", "04", "", "2022-08-01", "P", "1.0", "1.0", "1.0"),
            ("brk.b", "Berkshire", "V", "05", "", "2022-08-01-05:00", "P", "1.0", "", "1.0"),
        ]
    )
    out, counts = build_form4_trades(raw, MEMBERS)
    assert counts == {"rows": 8, "no_symbol": 1, "repeated": 1, "direction_unknown": 1}
    assert out["ticker"].tolist() == ["META"] * 5 + ["BRK-B"]
    assert out["transaction_shares"].tolist() == [-10.0, -5.0, 5.0, -50.0, 50.0, 1.0]
    assert out["shares_owned_before_transaction"].tolist()[:4] == [100.0, 90.0, 85.0, 60.0]
    assert np.isnan(out["shares_owned_before_transaction"].iloc[4])
    assert out["transaction_type"].tolist()[:4] == ["Sale", "Gift", "Other", "Gift"]
    assert out["title"].isna().tolist() == [True, False, False, True, True, True]
    assert np.isnan(out["transaction_price_per_share"].iloc[5])
    assert out["transaction_date"].iloc[5] == pd.Timestamp("2022-08-01")


def test_a_filed_transaction_is_kept_once_as_filed():
    form4, _ = build_form4_trades(
        _raw(
            [
                (
                    "AAPL",
                    "Apple Inc.",
                    "Adams Katherine L.",
                    "01",
                    "",
                    "2022-05-04",
                    "S",
                    "9136.0",
                    "159.94",
                    "468198.0",
                ),
                (
                    "AAPL",
                    "Apple Inc.",
                    "Adams Katherine L.",
                    "01",
                    "",
                    "2022-05-05",
                    "S",
                    "9136.0",
                    "159.94",
                    "459062.0",
                ),
            ]
        ),
        MEMBERS,
    )
    filed = form4.iloc[:1].assign(name="ADAMS KATHERINE L.", filing_date="2022-05-06", accession_number="0001")
    both, dropped = merge_trades(filed, form4)
    assert dropped == 1 and both["accession_number"].tolist() == ["0001", None]
