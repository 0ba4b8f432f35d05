"""Column dtypes shared by frames and the lake: categorical labels whose categories survive a Parquet round trip.

Example:
    >>> as_category(pd.Series(["b", "a"])).cat.categories.tolist()
    ['a', 'b']
"""

from __future__ import annotations

import pandas as pd

from fdkit.catalog.schema import KNOWN_CATEGORIES

__all__ = ["STRING_DTYPE", "as_category"]

#: pandas' default string dtype (``str`` in pandas 3, ``object`` before): the dtype of category labels
STRING_DTYPE = pd.Index([""]).dtype


def as_category(col: pd.Series) -> pd.Series:
    """A categorical whose categories have pandas' default string dtype (so Parquet round trips keep it).

    A field with a fixed value set (:data:`fdkit.catalog.schema.KNOWN_CATEGORIES`, by the series' name) always carries
    the whole set, so even an all-missing column has categories that Parquet keeps.

    Args:
        col: any series of labels.

    Returns:
        The categorical series; all-missing input of an open-ended field gets empty string categories.

    Example:
        >>> as_category(pd.Series(["b", "a", None])).cat.categories.tolist()
        ['a', 'b']
        >>> as_category(pd.Series([None, None], name="put_call")).cat.categories.tolist()
        ['Call', 'Put']
    """
    if not isinstance(col.dtype, pd.CategoricalDtype):
        col = col.astype("category")
    known = KNOWN_CATEGORIES.get(str(col.name))
    if known is not None:
        missing = [v for v in known if v not in set(col.cat.categories)]
        if missing:
            col = col.cat.add_categories(missing)
            col = col.cat.reorder_categories(sorted(col.cat.categories, key=str))
    if not len(col.cat.categories):
        return pd.Series(pd.Categorical(col, categories=pd.Index([], dtype="str")), index=col.index, name=col.name)
    if col.cat.categories.dtype != STRING_DTYPE:
        col = col.cat.set_categories(col.cat.categories.astype(STRING_DTYPE))
    order = sorted(col.cat.categories, key=str)
    if list(col.cat.categories) != order:  # categories made in order of appearance (Arrow dictionaries): sorted
        col = col.cat.reorder_categories(order)
    return col
