"""Statement vintages: every reported value of a statement field with the filing that reported it."""

from __future__ import annotations

import numpy as np
import pandas as pd

from refdata.common import PYSTOCK, SEC_PD, adjust_facts_for_splits
from refdata.concepts import CONCEPTS, INSTANT_FIELDS, SCHEMA_FIELDS, duration_kind
from refdata.stage import Context, Provenance, Stage, dataset


def build_vintages(facts: pd.DataFrame, pystock: pd.DataFrame) -> pd.DataFrame:
    """Every reported value of a statement field with the filing that reported it.

    The first report and each later filing that changed it (a restatement, or a prior-year comparative reported
    differently). XBRL facts (all filings of companyfacts, the instance documents): fiscal-year and 3-month
    durations and period-end instants, the field's first concept that the filing reported; per-share values and
    share counts on the split basis (``facts`` arrive adjusted). pystock reports: each sighting whose values changed.
    Derived rows (a fiscal Q4 = FY - 9M, TTM) have no vintages of their own.

    Args:
        facts: every report of each XBRL fact (``reports``), on the split basis.
        pystock: the pystock vintages.

    Returns:
        The ``statement_vintages`` rows.
    """
    per_field = []
    for field, concepts in CONCEPTS.items():  # a concept may feed two fields (ProfitLoss)
        if field in SCHEMA_FIELDS:
            rank = {c: i for i, c in enumerate(concepts)}
            hit = facts[facts["concept"].isin(rank)]
            per_field.append(hit.assign(field=field, rank=hit["concept"].map(rank)))
    df = pd.concat(per_field, ignore_index=True)
    df["days"] = (df["end"] - df["start"]).dt.days + 1
    kind = df["days"].map(lambda d: None if pd.isna(d) else duration_kind(d))
    instant = df["field"].isin(INSTANT_FIELDS) & df["start"].isna()
    quarterly = np.where(kind == "Q", "quarterly", None)  # type: ignore[call-overload]  # None: no period
    df["period"] = np.where(instant, "instant", np.where(kind == "FY", "annual", quarterly))
    df = df[df["period"].notna() & (instant | ~df["field"].isin(INSTANT_FIELDS))]
    # one value per (filing, field, period): the first concept of the mapping that the filing reported
    df = df.sort_values(["ticker", "field", "period", "end", "filed", "accn", "rank"], kind="stable")
    df = df.drop_duplicates(["ticker", "field", "period", "end", "accn"], keep="first")
    xbrl = pd.DataFrame(
        {
            "ticker": df["ticker"],
            "period": df["period"],
            "report_period": df["end"],
            "field": df["field"],
            "value": df["val"].astype(float),
            "filing_date": df["filed"],
            "accession_number": df["accn"],
            "form_type": df["form"],
            "concept": df["concept"],
        }
    )
    out = pd.concat([xbrl, pystock.assign(concept=None)], ignore_index=True)
    out = out.sort_values(
        ["ticker", "field", "period", "report_period", "filing_date", "accession_number"],
        kind="stable",
        na_position="first",
    ).reset_index(drop=True)
    key = ["ticker", "field", "period", "report_period"]
    revision = revision_kinds(out, key)  # each report against the report before it, kept or not
    prev = out.groupby(key, sort=False)["value"].shift()
    changed = prev.isna() | ((out["value"] - prev).abs() > 1e-9 * out["value"].abs().clip(lower=1.0))
    return out.assign(revision=revision)[changed].reset_index(drop=True)


def revision_kinds(vintages: pd.DataFrame, key: list[str]) -> pd.Series:
    """What each vintage is: the ``first`` report, ``restated`` or a ``concept_switch``.

    ``restated``: the same concept as the report before it; ``concept_switch``: the filing reported the field under
    another concept than the report before it, so the values measure different things (revenue with excise taxes,
    then without). Reports are compared with the report just before them, whether or not its value was kept as a
    vintage (a switch that left the value unchanged makes the next change a restatement under the new concept).

    Args:
        vintages: every report, in filing order within ``key`` (``concept`` missing where no source names it).
        key: the columns naming one value (ticker, field, period, report_period).

    Returns:
        The kind of each row.

    Example:
        >>> v = pd.DataFrame({"k": 1, "concept": ["Revenues", "Revenues", "SalesRevenueNet", "SalesRevenueNet"]})
        >>> revision_kinds(v, ["k"]).tolist()
        ['first', 'restated', 'concept_switch', 'restated']
    """
    g = vintages.groupby(key, sort=False)
    first = g.cumcount() == 0
    before = g["concept"].shift()
    switch = vintages["concept"].notna() & before.notna() & (vintages["concept"] != before)
    return pd.Series(
        np.where(first, "first", np.where(switch.fillna(False), "concept_switch", "restated")), index=vintages.index
    )


def _vintages(ctx: Context) -> dict[str, pd.DataFrame]:
    reports = pd.concat([ctx["reports"], ctx["fsds_facts"]], ignore_index=True)
    facts = adjust_facts_for_splits(reports, ctx["splits"])
    return {"statement_vintages": build_vintages(facts, ctx["pystock_vintages"])}


_PROVENANCE = Provenance(
    "as income_statements (every filing of companyfacts, the instance documents, every pystock sighting)",
    SEC_PD + "; pystock rows " + PYSTOCK,
    "every reported value of a statement field with the filing that reported it: the first report and each "
    "later filing that changed it (restatements, 10-K/As, prior-year comparatives reported differently); "
    "concept = the XBRL concept the value was read from (none for pystock rows); revision = first, restated (the "
    "same concept, another value) or concept_switch (the filing used another concept, so the change need not be a "
    "restatement: revenue with excise taxes, then without); "
    "fiscal-year and 3-month durations and period-end instants (period 'instant'), the field's first concept "
    "the filing reported; per-share values and share counts on the split basis. Derived rows (a fiscal Q4, "
    "TTM) have no vintages. The statement datasets hold the first report; `filing_date_lte=D` here gives "
    "what was known on D.",
)

VINTAGES = Stage(
    "statement_vintages",
    "Every reported value of a statement field (XBRL filings and pystock sightings)",
    _vintages,
    needs=("reports", "splits", "pystock_vintages", "fsds_facts"),
    outputs=(dataset("statement_vintages", _PROVENANCE),),
)

STAGES = (VINTAGES,)
