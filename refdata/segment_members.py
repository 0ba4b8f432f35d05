"""Segment members: their axes, human labels and hierarchy (subtotals and parents), shared by the segment stages."""

from __future__ import annotations

import re
from itertools import combinations

import numpy as np
import pandas as pd

AXES = {
    "srt:ProductOrServiceAxis": "product",
    "us-gaap:StatementBusinessSegmentsAxis": "segment",
    "srt:StatementGeographicalAxis": "geography",
    "us-gaap:StatementGeographicalAxis": "geography",
}

#: member names whose label the filer spells in a way camel case cannot tell (as printed in the filings)
_MEMBER_LABELS = {
    "IPhone": "iPhone",
    "IPad": "iPad",
    "Service": "Services",
    "ServicesAndOther": "Services and Other",
    "WearablesHomeandAccessories": "Wearables, Home and Accessories",
    "OEMAndOther": "OEM and Other",
    "ChinaIncludingHongKong": "China (including Hong Kong)",
    "GreaterChina": "Greater China",
    "RestOfAsiaPacific": "Rest of Asia Pacific",
    "AsiaPacific": "Asia Pacific",
    "AppleIphone": "iPhone",
    "AppleIpad": "iPad",
    "AppleMac": "Mac",
    "Ipod": "iPod",
    "IphoneRelatedProductsAndServices": "iPhone and Related Products and Services",
    "IpadRelatedProductsAndServices": "iPad and Related Products and Services",
    "YouTubeAdvertisingRevenue": "YouTube Ads",
    "LinkedInCorporation": "LinkedIn",
    "MedTech": "MedTech",
    "USCanada": "US & Canada",
    "A.Pacific": "Asia Pacific",
    "MajorProductLineDcor": "Major Product Line Décor",
    "HealthandWellness": "Health and Wellness",
    "MexicoandCentralAmerica": "Mexico and Central America",
    "SamsClubUS": "Sam's Club US",
    "NonUs": "Non-US",
    "Unitedhealthcare": "UnitedHealthcare",
    "Optumhealth": "Optum Health",
    "Optuminsight": "Optum Insight",
    "Optumrx": "Optum Rx",
    "ReportableSegment": "Reportable Segment",
    "ReportableSegmentAggregationBeforeOtherOperatingSegment": "Reportable Segments before Other",
}
#: ISO 3166 country members (``country:US``)
_COUNTRIES = {
    "US": "United States",
    "CN": "China",
    "SG": "Singapore",
    "TW": "Taiwan",
    "JP": "Japan",
    "GB": "United Kingdom",
    "IE": "Ireland",
    "DE": "Germany",
    "FR": "France",
    "IN": "India",
    "KR": "South Korea",
    "HK": "Hong Kong",
    "CA": "Canada",
    "MX": "Mexico",
    "BR": "Brazil",
    "NL": "Netherlands",
    "CH": "Switzerland",
    "AU": "Australia",
    "IL": "Israel",
    "IT": "Italy",
    "ES": "Spain",
    "SE": "Sweden",
    "BE": "Belgium",
    "LU": "Luxembourg",
}
_CONNECTORS = {"And": "and", "Of": "of", "Including": "including", "The": "the", "For": "for", "To": "to"}


def member_label(member: str) -> str:
    """The human label of an XBRL member.

    ``aapl:IPhoneMember`` -> ``iPhone``, ``srt:AmericasMember`` and ``aapl:AmericasSegmentMember`` ->
    ``Americas``, ``country:US`` -> ``United States``, ``nvda:ProfessionalVisualizationMember`` -> ``Professional
    Visualization``.

    Args:
        member: the member's QName.

    Returns:
        Its label.

    Example:
        >>> member_label("aapl:IPhoneMember"), member_label("nvda:ProfessionalVisualizationMember")
        ('iPhone', 'Professional Visualization')
    """
    local = member.split(":", 1)[-1]
    local = local[: -len("Member")] if local.endswith("Member") else local
    if local in _MEMBER_LABELS:
        return _MEMBER_LABELS[local]
    if local.endswith("Segment") and len(local) > len("Segment"):
        local = local[: -len("Segment")]
    if local in _MEMBER_LABELS:
        return _MEMBER_LABELS[local]
    if local in _COUNTRIES:
        return _COUNTRIES[local]
    words = re.findall(r"[A-Z]+(?=[A-Z][a-z]|\d|$)|[A-Z]?[a-z]+|\d+|[A-Z]+", local)
    return " ".join(_CONNECTORS.get(w, w) if i else w for i, w in enumerate(words)) or local


def one_breakdown(amounts: np.ndarray, total: float | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which members of one axis to keep, each member's parent and which members are subtotals.

    A parent is the index of the member, -1 for none (see :func:`refdata.segments.build_segments`).

    Args:
        amounts: the members' amounts.
        total: the period's total the leaves should add up to (``None``: unknown).

    Returns:
        ``(keep, parents, is_subtotal)``, one entry per member.

    Example:
        >>> keep, parents, subtotal = one_breakdown(np.array([10.0, 6.0, 4.0]), 10.0)
        >>> keep.tolist(), parents.tolist(), subtotal.tolist()
        ([True, True, True], [-1, 0, 0], [True, False, False])
    """
    n = len(amounts)
    keep, none, no = np.ones(n, dtype=bool), np.full(n, -1), np.zeros(n, dtype=bool)
    if total is not None and total > 0 and amounts.sum() <= 1.01 * total:
        return keep, none, no
    parents, subtotal = _parents(amounts)
    if total is None or not total > 0:
        return keep, parents, subtotal

    def close(x: float) -> bool:
        return abs(x - total) <= 0.01 * total

    leaf = np.flatnonzero(~subtotal)
    if close(amounts[leaf].sum()):
        return keep, parents, subtotal
    left_out = None
    for size in (1, 2):
        left_out = left_out or next(
            (c for c in combinations(leaf, size) if close(amounts[leaf].sum() - amounts[list(c)].sum())), None
        )
    for size in (2, 3):
        left_out = left_out or next(
            (
                c
                for c in combinations(leaf, size)
                if close(amounts[list(c)].sum()) and close(amounts[leaf].sum() - amounts[list(c)].sum())
            ),
            None,
        )
    if left_out is None:
        return no.copy(), none, no
    keep[list(left_out)] = False
    for i in np.flatnonzero(subtotal):  # a subtotal of a member left out goes with it
        if not keep[_descendants(parents, int(i))].all():
            keep[i] = False
    return keep, np.where(keep[np.maximum(parents, 0)] | (parents < 0), parents, -1), subtotal


def _parents(amounts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each member's parent (index, -1 for none) and which members are subtotals (up to 16 members).

    A subtotal is a member equal (within 0.1%) to the sum of two or more smaller members. Subtotals form a tree
    where their members nest (Product = iPhone + Mac + iPad + Wearables; Total = Product + Services): each member
    names the smallest subtotal holding it. A subtotal cutting across another (Tesla's Sales and Services beside
    its Automotive Revenues: automotive sales in both, leasing in one) is still a subtotal, named by no member.
    """
    n = len(amounts)
    parents, subtotal = np.full(n, -1), np.zeros(n, dtype=bool)
    if n > 16:
        return parents, subtotal
    covers: dict[int, frozenset[int]] = {}  # accepted subtotals -> the leaves below them
    for i in np.argsort(amounts, kind="stable"):
        target = amounts[i]
        smaller = [j for j in range(n) if amounts[j] < target]
        if not target > 0 or len(smaller) < 2 or amounts[smaller].sum() < 0.999 * target:
            continue
        for size in range(2, len(smaller) + 1):
            hit = next(
                (c for c in combinations(smaller, size) if abs(amounts[list(c)].sum() - target) <= 0.001 * target), None
            )
            if hit:
                break
        if not hit:
            continue
        subtotal[i] = True
        leaves = frozenset().union(*(covers.get(c, frozenset({c})) for c in hit))
        if all(c <= leaves or not (c & leaves) for c in covers.values()):
            covers[int(i)] = leaves
            for c in hit:
                parents[c] = i
    return parents, subtotal


def _descendants(parents: np.ndarray, i: int) -> list[int]:
    """The members below member ``i``."""
    below = [int(j) for j in np.flatnonzero(parents == i)]
    for j in list(below):
        below.extend(_descendants(parents, int(j)))
    return below


def with_hierarchy(rows: pd.DataFrame, group: list[str], revenue_of: dict) -> pd.DataFrame:
    """Mark each group's subtotals (``is_subtotal``) and name each member's parent (``parent_label``).

    Revenue members are checked against the period's revenue as segment items are (:func:`one_breakdown`);
    where no hierarchy reproduces the revenue (two breakdowns on one axis), nothing is marked and nothing left out.
    Other line items have no total to check against: subtotals are the members equal to a sum of smaller ones.

    Args:
        rows: segmented line items (``value``, ``label``, ``line_item`` and the ``group`` columns).
        group: the columns of one breakdown.
        revenue_of: (ticker, report period, period) -> revenue.

    Returns:
        The rows with ``is_subtotal`` and ``parent_label``.

    Example:
        >>> rows = pd.DataFrame({"line_item": "inventory", "label": ["All", "A", "B"], "value": [3.0, 1.0, 2.0]})
        >>> with_hierarchy(rows, ["line_item"], {})[["is_subtotal", "parent_label"]].values.tolist()
        [[True, None], [False, 'All'], [False, 'All']]
    """
    rows = rows.assign(is_subtotal=False, parent_label=None)
    for key, g in rows.groupby(group, sort=False, observed=True):
        amounts = g["value"].to_numpy(dtype=float)
        fields = dict(zip(group, key, strict=True))
        if fields["line_item"] == "revenue":
            total = revenue_of.get((fields["ticker"], fields["report_period"], fields["period"]))
            keep, parents, subtotal = one_breakdown(amounts, total)
            if not keep.all():
                continue
        else:
            parents, subtotal = _parents(amounts)
        labels = g["label"].to_numpy()
        rows.loc[g.index, "is_subtotal"] = subtotal
        rows.loc[g.index, "parent_label"] = [labels[p] if p >= 0 else None for p in parents]
    return rows
