"""Filter semantics, shared by the server's ``POST /financials/search/screener`` and ``df.fds.screen``.

A filter is ``{"field": str, "operator": "eq"|"gt"|"gte"|"lt"|"lte"|"in", "value": number | [str]}``; filters
combine with AND; missing values never match; results are sorted by ticker. ``in`` compares numbers on a numeric
field and strings on any other (tickers, CIKs); the other operators compare numbers. A field may be named as the
service's earliest document names it (:data:`FIELD_ALIASES`: ``pe_ratio`` is ``price_to_earnings_ratio``). Keyword
form: ``revenue__gt=1e11`` means ``{"field": "revenue", "operator": "gt", "value": 1e11}`` and a bare
``ticker=[...]`` means ``in``.

Example:
    >>> import pandas as pd
    >>> df = pd.DataFrame({"ticker": ["B", "A", "C"], "revenue": [5.0, 10.0, None]})
    >>> apply_filters(df, [{"field": "revenue", "operator": "gte", "value": 5}])["ticker"].tolist()
    ['A', 'B']
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from fdkit.errors import BadRequestError, suggest

__all__ = [
    "OPERATORS",
    "FIELD_ALIASES",
    "resolve_field",
    "normalize_filters",
    "filters_from_kwargs",
    "apply_filters",
    "filter_mask",
]

OPERATORS = ("eq", "gt", "gte", "lt", "lte", "in")
_TEXT_FIELDS = {"ticker", "cik"}
#: field names of the service's earliest document (its metrics snapshot) -> the metric fdkit serves under that meaning
FIELD_ALIASES: Mapping[str, str] = {
    "pe_ratio": "price_to_earnings_ratio",
    "pb_ratio": "price_to_book_ratio",
    "ps_ratio": "price_to_sales_ratio",
    "ev_ebitda_ratio": "enterprise_value_to_ebitda_ratio",
    "ev_revenue_ratio": "enterprise_value_to_revenue_ratio",
}


def resolve_field(field: str, fields: Iterable[str]) -> str | None:
    """The field a filter names: itself where known, else the metric its alias stands for.

    Args:
        field: the name a filter gives.
        fields: the fields that can be filtered.

    Returns:
        A name in ``fields``, or ``None`` when the name is neither a field nor an alias of one.

    Example:
        >>> resolve_field("pe_ratio", ["ticker", "price_to_earnings_ratio"])
        'price_to_earnings_ratio'
    """
    known = set(fields)
    if field in known:
        return field
    target = FIELD_ALIASES.get(field)
    return target if target in known else None


def filters_from_kwargs(**kwargs: Any) -> list[dict[str, Any]]:
    """Turn keyword filters into the service's filter objects.

    Args:
        **kwargs: ``field__op=value`` (``op`` one of :data:`OPERATORS`); ``field=value`` means ``eq``, or ``in``
            when the value is a list/tuple.

    Returns:
        Filter dicts.

    Example:
        >>> filters_from_kwargs(revenue__gt=1e11, ticker=["AAPL"])[1]
        {'field': 'ticker', 'operator': 'in', 'value': ['AAPL']}
    """
    out = []
    for key, value in kwargs.items():
        field, sep, op = key.rpartition("__")
        if not sep:
            field, op = key, ("in" if isinstance(value, list | tuple | set) else "eq")
        out.append({"field": field, "operator": op, "value": list(value) if op == "in" else value})
    return out


def normalize_filters(
    filters: Any, fields: Iterable[str], *, numeric: Iterable[str] | None = None
) -> list[dict[str, Any]]:
    """Validate filter objects against the fields a frame has.

    Args:
        filters: a list of filter dicts.
        fields: the fields that can be filtered.
        numeric: the fields holding numbers (``in`` compares numbers there); ``None``: every field but ``ticker``
            and ``cik``.

    Returns:
        The validated filters: fields as the frame names them (an alias resolved), numbers as float, ``in`` values
        as floats on a numeric field and as strings on any other.

    Raises:
        BadRequestError: naming the bad field, operator or value.

    Example:
        >>> normalize_filters([{"field": "x", "operator": "lt", "value": 1}], ["x"])
        [{'field': 'x', 'operator': 'lt', 'value': 1.0}]
        >>> normalize_filters([{"field": "x", "operator": "in", "value": [1, 2.5]}], ["x"])[0]["value"]
        [1.0, 2.5]
    """
    known = set(fields)
    numbers = known - _TEXT_FIELDS if numeric is None else set(numeric)
    if not isinstance(filters, list) or not filters:
        raise BadRequestError(
            "'filters' must be a non-empty array of {field, operator, value}", error="Invalid filters"
        )
    out = []
    for i, f in enumerate(filters):
        if not isinstance(f, Mapping):
            raise BadRequestError(
                f"filter {i} must be an object with field, operator and value", error="Invalid filters"
            )
        extra = set(f) - {"field", "operator", "value"}
        if extra or not {"field", "operator", "value"} <= set(f):
            raise BadRequestError(f"filter {i} must have exactly field, operator and value", error="Invalid filters")
        asked, op, value = f["field"], f["operator"], f["value"]
        field = resolve_field(asked, known) if isinstance(asked, str) else None
        if field is None:
            raise BadRequestError(
                f"unknown filter field {asked!r}; {suggest(str(asked), known | set(FIELD_ALIASES))}",
                error="Invalid filter field",
            )
        if op not in OPERATORS:
            raise BadRequestError(
                f"unknown operator {op!r} for field {asked!r}; use one of {', '.join(OPERATORS)}",
                error="Invalid filter operator",
            )
        if op == "in" and field in numbers:
            value = [_number(v) for v in value] if isinstance(value, list) and value else None
            if value is None or any(v is None for v in value):
                raise BadRequestError(
                    f"operator 'in' on {asked!r} needs a non-empty array of numbers", error="Invalid filter value"
                )
        elif op == "in":
            if not isinstance(value, list) or not value or not all(isinstance(v, str | int) for v in value):
                raise BadRequestError(
                    f"operator 'in' on {asked!r} needs a non-empty array of strings", error="Invalid filter value"
                )
            value = [str(v) for v in value]
        elif field not in numbers and op == "eq" and isinstance(value, str):
            value = str(value)
        else:
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise BadRequestError(
                    f"operator {op!r} on {asked!r} needs a finite number, got {value!r}", error="Invalid filter value"
                )
            value = float(value)
        out.append({"field": field, "operator": op, "value": value})
    return out


def _number(value: Any) -> float | None:
    """A finite number of an ``in`` list on a numeric field (a numeric string counts), else ``None``."""
    if isinstance(value, bool):
        return None
    try:
        number = float(value) if isinstance(value, int | float | str) else math.nan
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def filter_mask(df: pd.DataFrame, filters: Sequence[Mapping[str, Any]]) -> np.ndarray:
    """Boolean mask of the rows that pass every (validated) filter.

    Args:
        df: the frame (fields as columns; a ``ticker`` index level also counts).
        filters: validated filters (see :func:`normalize_filters`).

    Returns:
        A boolean array of ``len(df)``.

    Example:
        >>> filter_mask(pd.DataFrame({"x": [1.0, 2.0]}), [{"field": "x", "operator": "eq", "value": 2.0}]).tolist()
        [False, True]
    """
    mask = np.ones(len(df), dtype=bool)
    for f in filters:
        col = _column(df, f["field"])
        op, value = f["operator"], f["value"]
        if op == "in" and all(isinstance(v, float) for v in value):
            num = pd.to_numeric(col, errors="coerce").astype("float64").to_numpy()
            hit = np.isin(num, np.asarray(value, dtype="float64")) & ~np.isnan(num)
        elif op == "in" or isinstance(value, str):
            values = [value] if isinstance(value, str) else value
            text = col.astype("string")
            if f["field"] == "cik":
                text = text.str.lstrip("0")
                values = [v.lstrip("0") for v in values]
            hit = text.isin(values).fillna(False).to_numpy(dtype=bool)
        else:
            num = pd.to_numeric(col, errors="coerce").astype("float64").to_numpy()
            with np.errstate(invalid="ignore"):
                hit = {
                    "eq": num == value,
                    "gt": num > value,
                    "gte": num >= value,
                    "lt": num < value,
                    "lte": num <= value,
                }[op]
            hit = hit & ~np.isnan(num)
        mask &= hit
    return mask


def _column(df: pd.DataFrame, field: str) -> pd.Series:
    if field in df.columns:
        return df[field]
    if field in (df.index.names or []):
        return pd.Series(df.index.get_level_values(field), index=df.index)
    raise BadRequestError(f"unknown filter field {field!r}", error="Invalid filter field")


def _is_numeric(col: pd.Series) -> bool:
    return bool(pd.api.types.is_numeric_dtype(col.dtype)) and not pd.api.types.is_bool_dtype(col.dtype)


def apply_filters(df: pd.DataFrame, filters: Any) -> pd.DataFrame:
    """Validate filters, keep the matching rows and sort them by ticker (stable).

    Args:
        df: a frame with a ``ticker`` column or index level.
        filters: filter dicts.

    Returns:
        The matching rows, sorted by ticker.

    Example:
        >>> df = pd.DataFrame({"ticker": ["A"], "x": [1.0]})
        >>> len(apply_filters(df, [{"field": "x", "operator": "gt", "value": 5}]))
        0
    """
    fields = [str(c) for c in df.columns] + [str(n) for n in (df.index.names or []) if n]
    numeric = [f for f in fields if _is_numeric(_column(df, f))]
    valid = normalize_filters(filters, fields, numeric=numeric)
    out = df[filter_mask(df, valid)]
    tick = _column(out, "ticker").astype("string")
    order = np.argsort(tick.to_numpy(dtype=object, na_value=""), kind="stable")
    return out.iloc[order]
