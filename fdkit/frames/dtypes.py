"""Column dtypes shared by frames and the lake: categorical labels whose categories survive a Parquet round trip.

Frames never let a dtype depend on the data (:func:`as_label`): a field with a closed vocabulary
(:func:`closed_vocabulary`) is a category over its whole value set, whatever values a call returned; every other
label (tickers, names, currencies, periods, sources ...) is text: a column pandas' nullable ``string`` (as every
text field), an index level pandas' default string dtype (``str``: pyarrow reads a ``string`` index level back as
``str``, so only ``str`` levels survive ``to_parquet``). So the frames of two calls have the same dtypes and
``pd.concat`` keeps them. The lake keeps its own categories (:func:`as_category`).

Example:
    >>> as_category(pd.Series(["b", "a"])).cat.categories.tolist()
    ['a', 'b']
    >>> str(as_label(pd.Series(["AAPL"], name="ticker")).dtype)
    'string'
    >>> as_label(pd.Series(["Put"], name="put_call")).cat.categories.tolist()
    ['Call', 'Put']
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from fdkit.catalog.schema import KNOWN_CATEGORIES
from fdkit.errors import NarrowTypeWarning

__all__ = [
    "STRING_DTYPE",
    "LABEL_DTYPE",
    "LEVEL_DTYPE",
    "OPEN_FIELDS",
    "as_category",
    "as_label",
    "closed_vocabulary",
    "label_index",
]

#: pandas' default string dtype (``str`` in pandas 3, ``object`` before): the dtype of category labels
STRING_DTYPE = pd.Index([""]).dtype

#: the dtype of an open-ended label column in frames (names, currencies ...): pandas' nullable ``string``
LABEL_DTYPE = pd.StringDtype()

#: the dtype of an open-ended label index level (tickers, banks): pandas' default string dtype, which Parquet keeps
LEVEL_DTYPE = STRING_DTYPE

#: fields :data:`~fdkit.catalog.schema.KNOWN_CATEGORIES` lists whose values leave the listed set, so frames keep
#: them as text: ``form_type`` lists the statement forms (10-K, 10-Q), but insider frames hold Forms 3, 4 and 5,
#: 13F holdings 13F-HR, statement vintages and amended filings landed by the webhook receiver 10-K/A
OPEN_FIELDS = frozenset({"form_type"})


def closed_vocabulary(field: str) -> tuple[str, ...] | None:
    """The whole value set of a field frames keep as a category, or ``None`` for an open-ended label.

    Args:
        field: a column or index level name.

    Returns:
        The sorted values (:data:`~fdkit.catalog.schema.KNOWN_CATEGORIES`, but :data:`OPEN_FIELDS`), or ``None``.

    Example:
        >>> closed_vocabulary("sentiment"), closed_vocabulary("ticker"), closed_vocabulary("form_type")
        (('negative', 'neutral', 'positive'), None, None)
    """
    if field in OPEN_FIELDS:
        return None
    known = KNOWN_CATEGORIES.get(field)
    return None if known is None else tuple(sorted(known))


def as_label(col: pd.Series) -> pd.Series:
    """A label column as frames keep it: a category over its field's whole closed vocabulary, else ``string``.

    The dtype depends on the field's name only, never on the values a call returned. A value outside a closed
    vocabulary is kept (its category added, with a :class:`~fdkit.errors.NarrowTypeWarning`: that frame's categories
    then differ from other calls').

    Args:
        col: labels (categorical, string or object), named by their field.

    Returns:
        The column, categorical or ``string``.

    Example:
        >>> as_label(pd.Series([None], name="sentiment", dtype="object")).cat.categories.tolist()
        ['negative', 'neutral', 'positive']
    """
    vocabulary = closed_vocabulary(str(col.name))
    if vocabulary is None:
        return col if col.dtype == LABEL_DTYPE else col.astype(LABEL_DTYPE)
    return pd.Series(_closed(pd.Index(col), vocabulary, str(col.name)), index=col.index, name=col.name)


def _closed(values: pd.Index, vocabulary: tuple[str, ...], field: str) -> pd.Categorical:
    observed = {str(v) for v in values.dropna().unique()}
    extra = sorted(observed - set(vocabulary))
    if extra:
        warnings.warn(
            f"{field}: values such as {extra[0]!r} are outside its vocabulary {', '.join(vocabulary)}; "
            "kept (this frame's categories differ from other calls')",
            NarrowTypeWarning,
            stacklevel=5,
        )
    categories = pd.Index(sorted([*vocabulary, *extra]), dtype=STRING_DTYPE)
    text = values.astype(object).where(pd.notna(values), None)
    return pd.Categorical(text, categories=categories)


def label_index(index: pd.Index) -> pd.Index:
    """An index whose label levels follow :func:`as_label` (dates and numbers are left as they are).

    Args:
        index: a frame's index (one level or several).

    Returns:
        The index with :data:`LEVEL_DTYPE` levels for open labels and categorical levels over closed vocabularies.

    Example:
        >>> when = pd.to_datetime(["2024-01-02"])
        >>> idx = pd.MultiIndex.from_arrays([pd.Categorical(["AAPL"]), when], names=["ticker", "time"])
        >>> label_index(idx).dtypes["ticker"] == LEVEL_DTYPE
        True
    """
    if isinstance(index, pd.MultiIndex):
        before = list(index.levels)
        levels = [_label_level(level, name) for level, name in zip(before, index.names, strict=True)]
        if all(new is old for new, old in zip(levels, before, strict=True)):
            return index
        # pandas-stubs types levels as nested sequences; Index objects are what pandas takes
        return index.set_levels(levels, verify_integrity=False)  # type: ignore[arg-type]
    return _label_level(index, index.name)


def _is_label(index: pd.Index) -> bool:
    dtype = index.dtype
    return isinstance(dtype, pd.CategoricalDtype | pd.StringDtype) or dtype.kind == "O"


def _label_level(level: pd.Index, name: object) -> pd.Index:
    if not _is_label(level):
        return level
    vocabulary = closed_vocabulary(str(name))
    if vocabulary is None:
        return level if level.dtype == LEVEL_DTYPE else level.astype(LEVEL_DTYPE)
    return pd.CategoricalIndex(_closed(level, vocabulary, str(name)), name=level.name)


def without_unused(col: pd.Series) -> pd.Series:
    """A categorical series without the categories none of its values uses (as ``cat.remove_unused_categories``).

    A column read from many files' dictionaries knows every file's labels; counting the codes finds the used
    ones in one pass and recodes in another (pandas sorts the codes: a third of a second for 3.4M rows).

    Example:
        >>> s = pd.Series(pd.Categorical(["b", None, "b"], categories=["a", "b", "c"]))
        >>> without_unused(s).cat.categories.tolist(), without_unused(s).tolist()
        (['b'], ['b', nan, 'b'])
    """
    cat = col.array
    assert isinstance(cat, pd.Categorical)
    codes, n = cat.codes, len(cat.categories)
    used = np.zeros(n + 1, bool)  # (a missing value's code, -1, marks the last slot)
    used[codes] = True
    if bool(used[:n].all()):
        return col
    remap = np.full(n + 1, -1, codes.dtype)  # each used category's new code; -1 stays -1 (the last slot)
    remap[:n][used[:n]] = np.arange(int(used[:n].sum()), dtype=codes.dtype)
    kept = pd.Categorical.from_codes(
        remap[codes], categories=cat.categories[used[:n]], ordered=cat.ordered, validate=False
    )
    return pd.Series(kept, index=col.index, name=col.name)


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
    categories = col.cat.categories
    known = KNOWN_CATEGORIES.get(str(col.name))
    if known is not None:
        missing = [v for v in known if v not in set(categories)]
        if missing:
            categories = pd.Index(sorted([*categories, *missing], key=str))
    if not len(categories):
        return pd.Series(pd.Categorical(col, categories=pd.Index([], dtype="str")), index=col.index, name=col.name)
    if categories.dtype != STRING_DTYPE:
        categories = categories.astype(STRING_DTYPE)
    if not categories.is_monotonic_increasing:  # made in order of appearance (Arrow dictionaries): sorted
        categories = categories.sort_values()
    if categories is col.cat.categories:
        return col
    return _recoded(col, categories)


def _recoded(col: pd.Series, categories: pd.Index) -> pd.Series:
    """A categorical series over other ``categories`` (holding each of its values), its codes mapped in one gather.

    What ``cat.set_categories`` gives; pandas recodes through a take of int64 positions (85 ms for 3.4M rows,
    here about 5).

    Example:
        >>> s = pd.Series(pd.Categorical(["b", None, "a"], categories=["b", "a"]))
        >>> _recoded(s, pd.Index(["a", "b", "c"])).tolist()
        ['b', nan, 'a']
    """
    cat = col.array
    assert isinstance(cat, pd.Categorical)
    n = len(categories)
    kind = np.int8 if n < 127 else np.int16 if n < 32_767 else np.int32
    where = np.append(categories.get_indexer(cat.categories), -1).astype(kind)  # a missing code, -1: the last
    values = pd.Categorical.from_codes(where[cat.codes], categories=categories, ordered=cat.ordered, validate=False)
    return pd.Series(values, index=col.index, name=col.name)
