"""Rows kept as typed columns until a page is sent: the server's data path.

A handler that selects rows of a time-sorted frame returns them as :class:`FrameRecords`: slicing (``limit``, a
page) is a view of the frame, and only the rows of the page a client receives become JSON records (or an Arrow
page, straight from the columns). Before, every matching row (up to 5,000 bars) was turned into a dict per
request although 100 were sent.

Example:
    >>> import pandas as pd
    >>> rows = FrameRecords(pd.DataFrame({"x": [1.0, 2.0, 3.0]}), ["x"])
    >>> len(rows), rows[1:][:1].to_list()
    (3, [{'x': 2.0}])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, overload

import pandas as pd

from fdkit.frames.typed import to_records

__all__ = ["FrameRecords", "encode_lazy", "RECORDS_BYTES"]

#: what one lazy sequence of a ``/prices`` answer allocates besides the frame it views: the object, its field list
#: and the two getters (``functools.partial`` with their arguments), measured with tracemalloc over 5,000 answers
#: (the whole entry measured 1,655 bytes where 1,895 are counted), rounded up
RECORDS_BYTES = 768


class FrameRecords(Sequence[dict[str, Any]]):
    """Rows ``start:stop`` of a typed frame as a sequence of records; slices are positions, not copies.

    Args:
        base: the rows, typed as the lake types them (an Arrow page is made of its slice), or what returns them
            (the store's kept frame: an answer kept in the memo then holds no frame the store has let go).
        fields: the record's fields, in order.
        start: the first row of ``base`` in this sequence.
        stop: the row after the last (default: the end of ``base``).
        frame: what the getter ``base`` returns now, when the handler has it at hand: held until the first page is
            made of it (a slice takes it over), then let go. So one request asks the store for a ticker's rows
            once (the store keeps them from a ticker's second request), and a kept answer holds no frame.
    """

    def __init__(self, base: pd.DataFrame | Callable[[], pd.DataFrame], fields: list[str], start: int = 0,
                 stop: int | None = None, *, frame: pd.DataFrame | None = None) -> None:  # fmt: skip
        self._base = base
        self._held = frame if callable(base) else None
        if frame is None and not (callable(base) and stop is not None):
            frame = base() if callable(base) else base
        self.fields = fields if frame is None else [f for f in fields if f in frame.columns]
        self.start = start
        self.stop = len(frame) if stop is None and frame is not None else int(stop or 0)

    def _take_held(self) -> pd.DataFrame | None:
        held, self._held = self._held, None
        return held

    @property
    def base(self) -> pd.DataFrame:
        """The whole typed frame these rows are positions of (the frame at hand the first time, if any)."""
        if not callable(self._base):
            return self._base
        held = self._take_held()
        return held if held is not None else self._base()

    def __len__(self) -> int:
        return max(0, self.stop - self.start)

    @overload
    def __getitem__(self, key: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, key: slice) -> FrameRecords: ...

    def __getitem__(self, key: int | slice) -> dict[str, Any] | FrameRecords:
        if isinstance(key, slice):
            first, last, step = key.indices(len(self))
            if step != 1:
                raise ValueError("FrameRecords slices step by one")
            return FrameRecords(self._base, self.fields, self.start + first,
                                self.start + max(first, last), frame=self._take_held())  # fmt: skip
        if not -len(self) <= key < len(self):
            raise IndexError(key)
        i = key % len(self)
        return self[i : i + 1].to_list()[0]

    @property
    def frame(self) -> pd.DataFrame:
        """The rows as a typed frame (a view of the base frame)."""
        return self.base.iloc[self.start : self.stop]

    def to_list(self) -> list[dict[str, Any]]:
        """The JSON-ready records (dates ISO, missing values ``None``), made of these rows alone."""
        return to_records(self.frame, self.fields)

    def nbytes(self) -> int:
        """The memory these records hold, for the memo's byte budget.

        :data:`RECORDS_BYTES` for the objects of the sequence, its field list and its getters (measured), plus a
        frame handed in whole (its ``memory_usage(deep=True)``); a frame that comes from a getter (the store's) is
        not held, so not counted.

        Example:
            >>> FrameRecords(pd.DataFrame({"x": [1.0] * 1000}), ["x"]).nbytes() > 8000
            True
        """
        total = RECORDS_BYTES + 8 * len(self.fields)
        if isinstance(self._base, pd.DataFrame):
            total += int(self._base.memory_usage(index=True, deep=True).sum())
        return total


def encode_lazy(obj: Any) -> Any:
    """Orjson's ``default``: lazy records become lists when a response is encoded.

    Raises:
        TypeError: for anything else (as orjson does).

    Example:
        >>> import orjson
        >>> orjson.dumps({"x": FrameRecords(pd.DataFrame({"a": [1.5]}), ["a"])}, default=encode_lazy)
        b'{"x":[{"a":1.5}]}'
    """
    if isinstance(obj, FrameRecords):
        return obj.to_list()
    raise TypeError(f"{type(obj).__name__} is not JSON serialisable")
