"""The ``signals`` of an earnings record: the 2026 document's growth and margin signals, from year-over-year changes.

The document defines each signal it can fire by a threshold on a year-over-year change, and these are computable
from the lake's own statement history (the same fiscal quarter a year earlier, as first reported):

* ``REVENUE_INCREASE`` / ``REVENUE_DECLINE`` at 10% or more, ``STRONG_`` at 20% or more;
* ``NET_INCOME_*`` and ``EPS_*`` at 15% or more, ``STRONG_`` at 30% or more;
* ``CAPEX_*`` at 15% / 30% change in spending magnitude (capital expenditure is negative in the lake: the change of
  its absolute value);
* ``MARGIN_EXPANSION`` / ``MARGIN_CONTRACTION``: a gross, operating or net margin moved by 100 bps or more (one
  signal per margin that did).

The others need what the sources do not hold: analyst estimates (``EPS_BEAT`` ...), guidance, organic segment
growth, non-GAAP figures, backlog. Each signal has the document's ``type``, ``metric``, ``period``, ``headline`` and
``details`` (growth: ``current``, ``yoy_chg``; margins: ``current``, ``yoy_chg_bps``) and an ``importance``
(fdkit's ranking, which the document names without defining: HIGH for the strong tier, MEDIUM for the lower tier,
LOW for a margin move); at most 8, HIGH first.

Example:
    >>> row = {"fiscal_period": "FY2025-Q1", "quarterly_revenue": 120.0, "quarterly_revenue_yoy_chg": 0.25}
    >>> [(s["type"], s["importance"]) for s in earnings_signals(row)]
    [('STRONG_REVENUE_INCREASE', 'HIGH')]
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = ["earnings_signals", "GROWTH_TIERS", "MARGIN_BPS", "MAX_SIGNALS"]

#: metric -> (signal stem, lower tier, strong tier), thresholds on the magnitude of the year-over-year change
GROWTH_TIERS: dict[str, tuple[str, float, float]] = {
    "revenue": ("REVENUE", 0.10, 0.20),
    "net_income": ("NET_INCOME", 0.15, 0.30),
    "earnings_per_share": ("EPS", 0.15, 0.30),
    "capital_expenditure": ("CAPEX", 0.15, 0.30),
}
#: a margin move that fires MARGIN_EXPANSION / MARGIN_CONTRACTION, in basis points
MARGIN_BPS = 100.0
#: the document's cap per entry
MAX_SIGNALS = 8
_MARGINS = ("gross_margin", "operating_margin", "net_margin")
_RANK = {"HIGH": 0, "MEDIUM": 1, "LOW": 2}
_WORDS = {
    "revenue": "Revenue",
    "net_income": "Net income",
    "earnings_per_share": "EPS",
    "capital_expenditure": "Capital expenditure",
    "gross_margin": "Gross margin",
    "operating_margin": "Operating margin",
    "net_margin": "Net margin",
}


def _number(x: Any) -> float | None:
    """A finite float, or ``None`` for a missing value (None, NaN, pd.NA)."""
    try:
        f = float(x)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _growth(metric: str, current: float, change: float, period: str | None) -> dict[str, Any] | None:
    stem, low, strong = GROWTH_TIERS[metric]
    if abs(change) < low:
        return None
    tier = "STRONG_" if abs(change) >= strong else ""
    way = "INCREASE" if change > 0 else "DECLINE"
    words = f"{_WORDS[metric]} {'up' if change > 0 else 'down'} {abs(change):.1%} year over year"
    return {
        "type": f"{tier}{stem}_{way}",
        "metric": metric,
        "period": period,
        "headline": words,
        "importance": "HIGH" if tier else "MEDIUM",
        "details": {"current": current, "yoy_chg": change, "yoy_chg_bps": None},
    }


def _margin(metric: str, current: float, bps: float, period: str | None) -> dict[str, Any] | None:
    if abs(bps) < MARGIN_BPS:
        return None
    way = "MARGIN_EXPANSION" if bps > 0 else "MARGIN_CONTRACTION"
    words = f"{_WORDS[metric]} {'expanded' if bps > 0 else 'contracted'} {abs(bps):.0f} bps year over year"
    return {
        "type": way,
        "metric": metric,
        "period": period,
        "headline": words,
        "importance": "LOW",
        "details": {"current": current, "yoy_chg": None, "yoy_chg_bps": bps},
    }


def earnings_signals(row: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The signals one earnings row fires, from its quarterly year-over-year changes.

    Args:
        row: an ``earnings`` row (``fiscal_period``, ``quarterly_<metric>``, ``quarterly_<metric>_yoy_chg``,
            ``quarterly_<margin>``, ``quarterly_<margin>_yoy_chg_bps``, ``quarterly_capital_expenditure`` and the
            year-earlier spending ``capex_year_ago``, optional).

    Returns:
        The signals (possibly none), HIGH first, at most :data:`MAX_SIGNALS`; each detail is present (null-valued
        ones are left out when served).

    Example:
        >>> row = {"fiscal_period": "FY2016-Q2", "quarterly_net_income": 80.0, "quarterly_net_income_yoy_chg": -0.2,
        ...        "quarterly_gross_margin": 0.41, "quarterly_gross_margin_yoy_chg_bps": 150.0}
        >>> [s["type"] for s in earnings_signals(row)]
        ['NET_INCOME_DECLINE', 'MARGIN_EXPANSION']
    """
    period = row.get("fiscal_period")
    period = None if period is None or period != period else str(period)
    out: list[dict[str, Any]] = []
    for metric in GROWTH_TIERS:
        current = _number(row.get(f"quarterly_{metric}"))
        if metric == "capital_expenditure":  # spending magnitude: |capex| against |capex| a year earlier
            before = _number(row.get("capex_year_ago"))
            change = None if current is None or not before else abs(current) / abs(before) - 1
        else:
            change = _number(row.get(f"quarterly_{metric}_yoy_chg"))
        if current is not None and change is not None:
            out.append(_growth(metric, current, change, period) or {})
    for metric in _MARGINS:
        current, bps = _number(row.get(f"quarterly_{metric}")), _number(row.get(f"quarterly_{metric}_yoy_chg_bps"))
        if current is not None and bps is not None:
            out.append(_margin(metric, current, bps, period) or {})
    fired = [s for s in out if s]
    fired.sort(key=lambda s: _RANK[s["importance"]])  # stable: the document's enum order within a rank
    return fired[:MAX_SIGNALS]
