"""Daily moves beyond +/-25% of the 2015-2017 S&P 400 members that really happened (reviewed).

The pystock bars of the S&P 400 members of 2015-03 .. 2017-03 (energy and retail names of the 2015-2016 commodity
slump, distressed issuers) move beyond the lake's daily limit on days no release of the earnings dataset (today's
S&P 500 only) or corporate action of the lake explains. Each move here is printed within two points by Stooq's
adjusted closes (``../shared/data-real-5/prices/stooq_kaggle_sp1500_daily_adj_2005_2017.parquet``), a file the
lake's bars do not come from (``tests/test_reference_data.py`` checks every entry); the lake's filing dates name
the report filed that day where one was. Names whose moves no independent file prints are not served at all
(``fdkit.build.prices.EXCLUDED_PRICES``).

Example:
    >>> ("CRC", "2016-02-26") in {(t, d) for t, d, _ in SP400_REVIEWED}
    True
"""

from __future__ import annotations

__all__ = ["SP400_REVIEWED", "SP500_2016_REVIEWED"]

#: the reason of a move no stored source gives a cause for
_TWO_SOURCES = (
    " as traded in pystock's raw closes and in Stooq's adjusted closes alike; its cause is in no stored source"
)


def _near(move: str, period: str, filed: str) -> str:
    """A move within days of a report's filing (the lake's filing date; the release is in no stored source)."""
    return f"{move}, within three days of its {period} report (filed {filed});{_TWO_SOURCES}"


# fmt: off
SP400_REVIEWED: tuple[tuple[str, str, str], ...] = (
    ("AAN", "2015-10-30", "-26%;" + _TWO_SOURCES),
    ("ABMD", "2015-10-29", "-29%;" + _TWO_SOURCES),
    ("AKRX", "2016-03-22", "+41%;" + _TWO_SOURCES),
    ("ANF", "2015-11-20", "+25%;" + _TWO_SOURCES),
    ("ASNA", "2016-09-20", _near("-30%", "FY2016-Q4", "2016-09-19")),
    ("CAR", "2016-02-24", _near("-26%", "FY2015-Q4", "2016-02-24")),
    ("CC", "2015-12-18", "+26%;" + _TWO_SOURCES),
    ("CC", "2016-01-29", "+26%;" + _TWO_SOURCES),
    ("CLF", "2016-04-28", _near("+25%", "FY2016-Q1", "2016-04-28")),
    ("CLF", "2016-05-31", "+39%;" + _TWO_SOURCES),
    ("CRC", "2016-01-22", "+29%;" + _TWO_SOURCES),
    ("CRC", "2016-01-25", "-26%;" + _TWO_SOURCES),
    ("CRC", "2016-02-11", "-26%;" + _TWO_SOURCES),
    ("CRC", "2016-02-18", "-26%;" + _TWO_SOURCES),
    ("CRC", "2016-02-22", "+37%;" + _TWO_SOURCES),
    ("CRC", "2016-02-24", "-30%;" + _TWO_SOURCES),
    ("CRC", "2016-02-26", "+58%;" + _TWO_SOURCES),
    ("CRC", "2016-03-01", _near("+50%", "FY2015-Q4", "2016-02-29")),
    ("CRC", "2016-03-03", _near("+40%", "FY2015-Q4", "2016-02-29")),
    ("CRC", "2016-03-04", "+48%;" + _TWO_SOURCES),
    ("CRC", "2016-03-08", "-28%;" + _TWO_SOURCES),
    ("CRC", "2016-08-08", "+28%;" + _TWO_SOURCES),
    ("CRC", "2016-11-30", "+44%;" + _TWO_SOURCES),
    ("CRR", "2016-10-27", _near("-27%", "FY2016-Q3", "2016-10-27")),
    ("CRR", "2017-01-26", "+29%;" + _TWO_SOURCES),
    ("CXW", "2016-08-18", "-36%;" + _TWO_SOURCES),
    ("CXW", "2016-11-09", "+43%;" + _TWO_SOURCES),
    ("CYH", "2015-10-22", "-35%;" + _TWO_SOURCES),
    ("CYH", "2016-10-27", "-50%;" + _TWO_SOURCES),
    ("CYH", "2017-02-21", _near("+34%", "FY2016-Q4", "2017-02-21")),
    ("DDD", "2016-03-14", _near("+25%", "FY2015-Q4", "2016-03-14")),
    ("ESL", "2016-02-05", _near("-30%", "FY2016-Q1", "2016-02-05")),
    ("GEO", "2016-08-18", "-40%;" + _TWO_SOURCES),
    ("HAIN", "2016-08-16", "-26%;" + _TWO_SOURCES),
    ("HLX", "2015-10-20", _near("+26%", "FY2015-Q3", "2015-10-21")),
    ("HSC", "2016-02-26", _near("-37%", "FY2015-Q4", "2016-02-26")),
    ("IDTI", "2016-02-02", "-27%;" + _TWO_SOURCES),
    ("NUS", "2015-10-07", "-26%;" + _TWO_SOURCES),
    ("ODP", "2016-05-11", "-40%;" + _TWO_SOURCES),
    ("PLT", "2016-02-02", _near("-27%", "FY2016-Q3", "2016-02-01")),
    ("UPBD", "2015-10-27", "-30%;" + _TWO_SOURCES),
    ("UPBD", "2016-02-02", "-26%;" + _TWO_SOURCES),
    ("UPBD", "2016-10-11", "-29%;" + _TWO_SOURCES),
    ("RH", "2016-02-25", "-26%;" + _TWO_SOURCES),
    ("SKX", "2015-10-23", "-32%;" + _TWO_SOURCES),
    ("SM", "2016-01-21", "+26%;" + _TWO_SOURCES),
    ("SM", "2016-03-03", "+32%;" + _TWO_SOURCES),
    ("SYNA", "2015-09-30", "+27%;" + _TWO_SOURCES),
    ("SYNA", "2016-01-20", "+27%;" + _TWO_SOURCES),
    ("TDW", "2016-03-04", "+28%;" + _TWO_SOURCES),
    ("TDW", "2016-05-26", _near("-36%", "FY2016-Q4", "2016-05-26")),
    ("TDW", "2016-10-24", "-44%;" + _TWO_SOURCES),
    ("TEX", "2016-01-26", "+37%;" + _TWO_SOURCES),
    ("MTUS", "2016-01-11", "-41%;" + _TWO_SOURCES),
    ("MTUS", "2016-01-29", "+75%;" + _TWO_SOURCES),
    ("TPX", "2017-01-30", "-28%;" + _TWO_SOURCES),
    ("UNT", "2015-10-06", "+31%;" + _TWO_SOURCES),
    ("UNT", "2016-03-02", "+33%;" + _TWO_SOURCES),
    ("UNT", "2016-03-03", "+29%;" + _TWO_SOURCES),
    ("UNT", "2016-03-08", "-26%;" + _TWO_SOURCES),
    ("WPX", "2016-11-30", "+28%;" + _TWO_SOURCES),
)
# fmt: on


#: where no stored file prints the day (Stooq's 2017-2025 file ends 2025-07-09 and names Paramount PARA; SMCI traded
#: over the counter in 2018-2020): the cause, as reported at the time
_NO_FILE = " (no stored file but the S&P 500 source covers the day under this symbol)"

# fmt: off
#: moves of the S&P 500 source's bars (fdkit-history's ``prices``, 2016-2026) that Stooq does not print under the
#: lake's ticker (the others are :data:`fdkit.lake.validate.CONFIRMED_MOVES_CSV`'s, with their evidence)
SP500_2016_REVIEWED: tuple[tuple[str, str, str], ...] = (
    ("ALGN", "2025-07-31", "-37% after its Q2 2025 results and cut outlook (released 2025-07-30 after the close)"
        + _NO_FILE),
    ("CARR", "2020-04-03", "+27% on its first regular-way session, the day of its spin-off from United "
        "Technologies (the bar before is when-issued trading)" + _NO_FILE),
    ("FISV", "2025-10-29", "-44% after its Q3 2025 results and reset outlook" + _NO_FILE),
    ("IDXX", "2025-08-04", "+27% after its Q2 2025 results and raised guidance" + _NO_FILE),
    ("IT", "2025-08-05", "-28% after its Q2 2025 results and cut outlook" + _NO_FILE),
    ("LW", "2025-12-19", "-26% on its fiscal Q2 2026 results day" + _NO_FILE),
    ("MOH", "2026-02-06", "-26% after its Q4 2025 results and 2026 guidance" + _NO_FILE),
    ("PSKY", "2020-03-24", "+31% as ViacomCBS in the rebound of 2020-03-24 (Stooq's file prints it under PARA: "
        "+30.8%)"),
    ("PSKY", "2021-03-26", "-27% as ViacomCBS in the Archegos block sales (Stooq's PARA: -27.3%)"),
    ("PSKY", "2023-05-04", "-28% as Paramount Global after its Q1 2023 results and dividend cut (Stooq's PARA: "
        "-28.4%)"),
    ("PSKY", "2025-08-13", "+37% days after the Skydance merger closed (2025-08-07)" + _NO_FILE),
    ("SMCI", "2018-10-04", "-41% on Bloomberg's report of spy chips in its server boards (over the counter then)"
        + _NO_FILE),
    ("SNDK", "2026-01-06", "+28% in the memory-storage rally after NVIDIA's CES keynote" + _NO_FILE),
    ("SNPS", "2025-09-10", "-36% after its fiscal Q3 2025 results (the IP business's miss)" + _NO_FILE),
    ("TTD", "2025-08-08", "-39% after its Q2 2025 results and outlook" + _NO_FILE),
    ("WBD", "2021-03-26", "-27% as Discovery in the Archegos block sales (Discovery's DISCA, DISCK)" + _NO_FILE),
    ("WBD", "2025-09-11", "+29% on the report that Paramount Skydance prepared a bid for it" + _NO_FILE),
)
# fmt: on
