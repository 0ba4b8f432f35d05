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

__all__ = ["SP400_REVIEWED"]

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
