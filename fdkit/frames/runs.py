"""Many responses' parts as runs of one table: a bulk answer's shared table, read into the frame whole.

A bulk answer of a thousand companies is one table of their rows with, per ticker, its run of them
(:mod:`fdkit.frames.bundle`). Cutting it into a thousand parts (a slice per ticker: 30 columns' slices, 18 us) and
concatenating them again cost more than the floor of reading those rows. Here each ticker's part is a :class:`Run`
(the table, the run's offset and length, its constants: nothing cut), :func:`grouped` turns a list of them into
:class:`Runs` (one per table, in the list's order) and :func:`fdkit.frames.typed.frame_from_parts` reads a
:class:`Runs` as the parts it stands for: the same frame, copied from the table in a few stretches.

Example:
    >>> import pyarrow as pa
    >>> table = pa.table({"close": [1.0, 2.0, 3.0]})
    >>> pieces = [Run(table, 0, 1, {"ticker": "A"}), Run(table, 1, 2, {"ticker": "B"})]
    >>> [type(p).__name__ for p in grouped(pieces)], as_part(pieces[1])[0]["close"].to_pylist()
    (['Runs'], [2.0, 3.0])
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa

__all__ = ["Run", "Runs", "Piece", "as_part", "grouped", "piece_rows"]

#: a response's typed columns, its row count, its constants (:data:`fdkit.frames.typed.Part`)
_Part = tuple[pa.Table, int, dict[str, Any]]


class Run(NamedTuple):
    """One response's part as rows ``offset .. offset + rows`` of a table shared with other responses.

    Attributes:
        table: the shared table, in the types it was written in.
        offset: the run's first row.
        rows: its row count.
        constants: its constants (the table's, with its own ticker).
    """

    table: pa.Table
    offset: int
    rows: int
    constants: dict[str, Any]


#: what a many-ticker fetch hands the frame builder for each ticker: its own part, or its run of a shared table
Piece = _Part | Run


@dataclass(frozen=True, eq=False)
class Runs:
    """Several responses' parts as runs of one table, in the responses' order.

    Attributes:
        table: the shared table.
        offsets: each run's first row (int64).
        rows: each run's row count (int64).
        constants: each run's constants.
    """

    table: pa.Table
    offsets: np.ndarray
    rows: np.ndarray
    constants: list[dict[str, Any]]

    def __post_init__(self) -> None:
        if not (len(self.offsets) == len(self.rows) == len(self.constants)):
            raise ValueError(
                f"runs of {len(self.offsets)} offsets, {len(self.rows)} counts, {len(self.constants)} constants"
            )
        if len(self.rows) and (
            int(self.offsets.min()) < 0
            or int(self.rows.min()) < 0
            or int((self.offsets + self.rows).max()) > self.table.num_rows
        ):
            raise ValueError(f"runs naming rows outside their table of {self.table.num_rows}")

    def __len__(self) -> int:
        return len(self.constants)

    @property
    def total(self) -> int:
        """The rows of all runs."""
        return int(self.rows.sum())

    def part(self, i: int) -> _Part:
        """Run ``i`` as a part of its own (a slice: nothing copied)."""
        n = int(self.rows[i])
        return self.table.slice(int(self.offsets[i]), n), n, self.constants[i]

    def parts(self) -> Iterator[_Part]:
        """Every run as a part of its own, in order."""
        return (self.part(i) for i in range(len(self)))

    def contiguous(self) -> bool:
        """Whether the runs follow each other in the table, in order (then :meth:`covering` is one slice)."""
        return len(self) < 2 or bool((self.offsets[1:] == self.offsets[:-1] + self.rows[:-1]).all())

    def covering(self) -> pa.Table:
        """The runs' rows in order as one table: a slice of the table when they follow each other, else a take.

        Example:
            >>> t = pa.table({"x": [0.0, 1.0, 2.0, 3.0]})
            >>> r = Runs(t, np.array([2, 0]), np.array([2, 1]), [{}, {}])
            >>> r.covering()["x"].to_pylist(), r.contiguous()
            ([2.0, 3.0, 0.0], False)
        """
        if not len(self):
            return self.table.slice(0, 0)
        if self.contiguous():
            return self.table.slice(int(self.offsets[0]), self.total)
        return self.table.take(positions(self.offsets, self.rows))


def positions(offsets: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The row positions of runs, in order (``offsets[i] .. offsets[i] + rows[i]`` for each ``i``).

    Example:
        >>> positions(np.array([5, 0]), np.array([2, 3])).tolist()
        [5, 6, 0, 1, 2]
    """
    total = int(rows.sum())
    if not total:
        return np.zeros(0, np.int64)
    starts = np.repeat(offsets - np.concatenate([[0], np.cumsum(rows)[:-1]]), rows)
    return starts + np.arange(total)


def as_part(piece: Piece) -> _Part:
    """A piece as a part of its own (a run: its slice of the table).

    Example:
        >>> as_part(Run(pa.table({"x": [1.0, 2.0]}), 1, 1, {}))[0]["x"].to_pylist()
        [2.0]
    """
    if isinstance(piece, Run):
        return piece.table.slice(piece.offset, piece.rows), piece.rows, piece.constants
    return piece


def piece_rows(piece: Piece) -> int:
    """A piece's row count.

    Example:
        >>> piece_rows(Run(pa.table({"x": [1.0, 2.0]}), 1, 1, {})), piece_rows((pa.table({"x": [1.0]}), 1, {}))
        (1, 1)
    """
    return piece.rows if isinstance(piece, Run) else piece[1]


def grouped(pieces: Sequence[Piece]) -> list[_Part | Runs]:
    """Consecutive runs of one table as one :class:`Runs`; parts of their own as they are; the order kept.

    Example:
        >>> t, u = pa.table({"x": [1.0, 2.0]}), pa.table({"x": [3.0]})
        >>> out = grouped([Run(t, 0, 1, {}), Run(t, 1, 1, {}), (u, 1, {}), Run(t, 0, 2, {})])
        >>> [len(p) if isinstance(p, Runs) else "part" for p in out]
        [2, 'part', 1]
    """
    out: list[_Part | Runs] = []
    table: pa.Table | None = None
    run: list[Run] = []

    def flush() -> None:
        if run:
            offsets = np.fromiter((r.offset for r in run), np.int64, len(run))
            rows = np.fromiter((r.rows for r in run), np.int64, len(run))
            out.append(Runs(run[0].table, offsets, rows, [r.constants for r in run]))
            run.clear()

    for piece in pieces:
        if isinstance(piece, Run):
            if piece.table is not table:
                flush()
                table = piece.table
            run.append(piece)
            continue
        flush()
        table = None
        out.append(piece)
    flush()
    return out
