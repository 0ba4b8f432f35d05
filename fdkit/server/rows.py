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

import copy
from collections.abc import Callable, Sequence
from typing import Any, overload

import numpy as np
import orjson
import pandas as pd

from fdkit.frames.typed import to_records

__all__ = ["AHEAD_BLOCKS", "FrameRecords", "JSON_BLOCK", "RECORDS_BYTES", "encode_lazy", "json_blocks"]

#: rows of a ticker's sorted bars encoded together: a page of 100 rows is cut from two or three blocks
JSON_BLOCK = 64

#: blocks encoded ahead of a page when the answer runs on (pages follow): one encoding of up to 512 more rows
AHEAD_BLOCKS = 8

#: blocks ``first..last`` of a base frame as :func:`json_blocks` makes them, given ``first``, ``last``, how many
#: blocks after ``last`` to encode with them if they must be made, and what gives the frame then
BlockGetter = Callable[[int, int, int, Callable[[], pd.DataFrame]], list[tuple[bytes, np.ndarray]]]

#: what one lazy sequence of a ``/prices`` answer allocates besides the frame it views: the object, its field list
#: and the three getters (``functools.partial`` with their arguments; the blocks' getter holds the fields as a
#: tuple), measured with tracemalloc over 3,500 answers (the whole entry measured 2,006 bytes where 2,183 are
#: counted; 1,655 before the blocks' getter), rounded up
RECORDS_BYTES = 1024


def json_blocks(frame: pd.DataFrame, fields: list[str], first: int, last: int) -> list[tuple[bytes, np.ndarray]]:
    """Blocks ``first..last`` (:data:`JSON_BLOCK` rows each) of ``frame`` as JSON objects, and where each begins.

    The objects are what :func:`~fdkit.frames.typed.to_records` and ``orjson.dumps`` make of the rows (one
    conversion of the run's columns), each followed by a comma; ``starts[k]`` is where row ``k`` of a block begins
    and ``starts[-1]`` the blob's length, so rows ``a:b`` of a block are ``blob[starts[a]:starts[b]]``.

    Example:
        >>> [(blob, starts.tolist()) for blob, starts in json_blocks(pd.DataFrame({"x": [1.5, None]}), ["x"], 0, 0)]
        [(b'{"x":1.5},{"x":null},', [0, 10, 21])]
    """
    records = to_records(frame.iloc[first * JSON_BLOCK : (last + 1) * JSON_BLOCK], fields)
    rows = [orjson.dumps(r) + b"," for r in records]
    out = []
    for at in range(0, len(rows), JSON_BLOCK):
        part = rows[at : at + JSON_BLOCK]
        starts = np.zeros(len(part) + 1, dtype=np.int32)
        np.cumsum([len(r) for r in part], out=starts[1:])
        out.append((b"".join(part), starts))
    return out


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
        blocks: what gives blocks of ``base`` encoded (:func:`json_blocks` of ``fields``; the store keeps them),
            handed what gives the base frame (asked once a page, only for blocks not kept); without it a JSON page
            is made of its rows alone. A page of an answer that runs on has the blocks after it encoded with its
            own (:data:`AHEAD_BLOCKS`): a walk of a ticker's pages converts its rows a few times, not once a page.
    """

    def __init__(
        self,
        base: pd.DataFrame | Callable[[], pd.DataFrame],
        fields: list[str],
        start: int = 0,
        stop: int | None = None,
        *,
        frame: pd.DataFrame | None = None,
        blocks: BlockGetter | None = None,
    ) -> None:
        self._base = base
        self._blocks = blocks
        self._held = frame if callable(base) else None
        if frame is None and not (callable(base) and stop is not None):
            frame = base() if callable(base) else base
        self.fields = fields if frame is None else [f for f in fields if f in frame.columns]
        self.start = start
        self.stop = len(frame) if stop is None and frame is not None else int(stop or 0)
        self._until = self.stop  # the answer's last row (a page, a slice of it, knows whether pages follow)

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
            part = copy.copy(self)  # (the fields are known present: not looked up in the frame again)
            part.start, part.stop, part._held = self.start + first, self.start + max(first, last), self._take_held()
            return part
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

    def json_bytes(self) -> bytes:
        """The rows as a JSON array: cut from the encoded blocks when there are, else made of these rows alone.

        Example:
            >>> frame = pd.DataFrame({"x": [float(i) for i in range(100)]})
            >>> rows = FrameRecords(frame, ["x"], blocks=lambda k, last, _, base: json_blocks(base(), ["x"], k, last))
            >>> rows[62:66].json_bytes()
            b'[{"x":62.0},{"x":63.0},{"x":64.0},{"x":65.0}]'
        """
        if not len(self):
            return b"[]"
        if self._blocks is None:
            return orjson.dumps(self.to_list())
        held = self._take_held()

        def base() -> pd.DataFrame:  # the frame once, and only if a block is not kept
            nonlocal held
            if held is None:
                held = self.base
            return held

        first, last = self.start // JSON_BLOCK, (self.stop - 1) // JSON_BLOCK
        ahead = min(AHEAD_BLOCKS, (self._until - 1) // JSON_BLOCK - last)
        pieces = []
        for k, (blob, starts) in enumerate(self._blocks(first, last, ahead, base), start=first):
            lo = self.start - k * JSON_BLOCK if k == first else 0
            hi = self.stop - k * JSON_BLOCK if k == last else len(starts) - 1
            pieces.append(blob[starts[lo] : starts[hi]])
        return b"[" + b"".join(pieces)[:-1] + b"]"

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
    """Orjson's ``default``: lazy records become their JSON array when a response is encoded.

    The array is :meth:`FrameRecords.json_bytes`, handed to orjson as a ``Fragment`` (bytes it copies as they are).

    Raises:
        TypeError: for anything else (as orjson does).

    Example:
        >>> import orjson
        >>> orjson.dumps({"x": FrameRecords(pd.DataFrame({"a": [1.5]}), ["a"])}, default=encode_lazy)
        b'{"x":[{"a":1.5}]}'
    """
    if isinstance(obj, FrameRecords):
        return orjson.Fragment(obj.json_bytes())
    raise TypeError(f"{type(obj).__name__} is not JSON serialisable")
