"""The frames layer (L2): records and Arrow parts <-> typed, tidy DataFrames. Pure: no I/O, no client.

Owns the typed-frame conversion (:mod:`.typed`), shared column dtypes (:mod:`.dtypes`), price and share bases
(:mod:`.basis`), the screener's filter semantics (:mod:`.filters`) and the filing times that travel with a frame's
rows (:mod:`.pointintime`).

May import: :mod:`fdkit.catalog`, :mod:`fdkit.errors`. Never the lake, the network, the client or the server.
"""

from __future__ import annotations

from fdkit.frames.basis import (  # noqa: F401  (the package's public names)
    ADJUSTED,
    ATTR,
    PER_SHARE,
    PRICES,
    RAW,
    SHARE_COUNTS,
    basis_of,
    rebase,
    split_factor,
)
from fdkit.frames.dtypes import (  # noqa: F401  (the package's public names)
    STRING_DTYPE,
    as_category,
)
from fdkit.frames.filters import (  # noqa: F401  (the package's public names)
    OPERATORS,
    apply_filters,
    filter_mask,
    filters_from_kwargs,
    normalize_filters,
)
from fdkit.frames.typed import (  # noqa: F401  (the package's public names)
    ARROW_STREAM,
    FORMATS_HEADER,
    PageRows,
    Part,
    arrow_rows,
    empty_frame,
    exhibits_frame,
    fields_in_frame,
    frame_from_parts,
    join_parts,
    json_columns,
    part_bytes,
    part_from_bytes,
    part_of_rows,
    part_tag,
    records_of,
    response_part,
    to_frame,
    to_records,
    typed_frame,
)

__all__ = [
    "to_frame",
    "typed_frame",
    "empty_frame",
    "exhibits_frame",
    "records_of",
    "to_records",
    "ARROW_STREAM",
    "FORMATS_HEADER",
    "part_of_rows",
    "join_parts",
    "arrow_rows",
    "Part",
    "PageRows",
    "part_tag",
    "part_bytes",
    "part_from_bytes",
    "response_part",
    "frame_from_parts",
    "fields_in_frame",
    "json_columns",
    "STRING_DTYPE",
    "as_category",
    "ADJUSTED",
    "ATTR",
    "RAW",
    "PER_SHARE",
    "SHARE_COUNTS",
    "PRICES",
    "basis_of",
    "rebase",
    "split_factor",
    "OPERATORS",
    "normalize_filters",
    "filters_from_kwargs",
    "apply_filters",
    "filter_mask",
]
