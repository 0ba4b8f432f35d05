"""US market sessions: when a filing accepted at a given time can first be traded on.

EDGAR accepts filings in Eastern Time and the service reports that time (``filing_datetime``, ISO 8601 with its
offset). A filing accepted before the 16:00 close on a weekday is known at that day's close; one accepted later,
or on a weekend, is known from the next day's session.

Example:
    >>> import pandas as pd
    >>> from fdkit.research.sessions import known_from
    >>> known_from(pd.Series(["2023-11-02T18:08:27-04:00", "2024-11-01T06:01:36-04:00", None])).tolist()
    [Timestamp('2023-11-03 00:00:00'), Timestamp('2024-11-01 00:00:00'), NaT]
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["EASTERN", "MARKET_CLOSE_MINUTES", "known_from", "edgar_filing_date"]

#: the exchanges' and EDGAR's time zone
EASTERN = "America/New_York"
#: the regular session's close, in minutes after midnight Eastern Time
MARKET_CLOSE_MINUTES = 16 * 60
#: EDGAR's cut-off for the filing date, in minutes after midnight Eastern Time: 17:30, and 22:00 for the Section 16
#: forms (3, 4, 5 and their amendments)
EDGAR_CUTOFF_MINUTES, SECTION_16_CUTOFF_MINUTES = 17 * 60 + 30, 22 * 60
SECTION_16_FORMS = ("3", "4", "5", "3/A", "4/A", "5/A")


def known_from(filing_datetime: pd.Series) -> pd.Series:
    """The first day whose close comes after each acceptance time (a date without time; NaT where missing).

    Args:
        filing_datetime: acceptance times as ISO 8601 strings with an offset, or timezone-aware timestamps.

    Returns:
        A ``datetime64[ns]`` series on the same index: the acceptance day if accepted on a weekday before
        16:00 Eastern, else the next calendar day (the next bar at or after it is the first that can use it).

    Example:
        >>> known_from(pd.Series(["2024-02-01T18:03:38-05:00"])).iloc[0]
        Timestamp('2024-02-02 00:00:00')
    """
    text = filing_datetime.astype("string")
    at = pd.to_datetime(text, format="ISO8601", utc=True, errors="coerce").dt.tz_convert(EASTERN)
    day = at.dt.tz_localize(None).dt.normalize()
    before_close = (at.dt.hour * 60 + at.dt.minute < MARKET_CLOSE_MINUTES) & (at.dt.day_of_week < 5)
    return day.where(before_close, day + pd.Timedelta(days=1)).astype("datetime64[ns]")


def edgar_filing_date(accepted: pd.Series, form: pd.Series | None = None) -> pd.Series:
    """The filing date EDGAR gives a submission accepted at each time (Regulation S-T, rule 13).

    Accepted on a business day by 17:30 Eastern (22:00 for Forms 3, 4 and 5), that day; later, or on a weekend
    or federal holiday, the next business day. Checking the dates a source states against this rule tells
    whether the source's acceptance times are Eastern or UTC.

    Args:
        accepted: timezone-aware acceptance times.
        form: the form type of each submission (optional; without it every cut-off is 17:30).

    Returns:
        A ``datetime64[ns]`` series of filing dates (NaT where the time is missing).

    Example:
        >>> at = pd.Series(pd.to_datetime(["2023-11-02 18:08", "2023-10-24 16:07"])).dt.tz_localize(EASTERN)
        >>> edgar_filing_date(at).dt.strftime("%Y-%m-%d").tolist()
        ['2023-11-03', '2023-10-24']
    """
    from pandas.tseries.holiday import USFederalHolidayCalendar  # noqa: PLC0415

    local = accepted.dt.tz_convert(EASTERN).dt.tz_localize(None)
    day = local.dt.normalize()
    known = day.dropna()
    if known.empty:
        return pd.Series(pd.NaT, index=accepted.index, dtype="datetime64[ns]")
    holidays = USFederalHolidayCalendar().holidays(known.min(), known.max() + pd.Timedelta(days=10))
    cutoff = pd.Series(EDGAR_CUTOFF_MINUTES, index=accepted.index)
    if form is not None:
        cutoff = cutoff.where(~form.astype("string").isin(SECTION_16_FORMS).fillna(False), SECTION_16_CUTOFF_MINUTES)
    late = (local.dt.hour * 60 + local.dt.minute) > cutoff
    d = known.to_numpy().astype("datetime64[D]")
    hol = holidays.to_numpy().astype("datetime64[D]")
    same = np.busday_offset(d, 0, roll="forward", holidays=hol)
    after = np.busday_offset(d, 1, roll="forward", holidays=hol)
    out = pd.Series(pd.NaT, index=accepted.index, dtype="datetime64[ns]")
    is_late = late.loc[known.index].to_numpy()
    out.loc[known.index] = np.where(is_late, after, same).astype("datetime64[ns]")
    return out
