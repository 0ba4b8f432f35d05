"""The stage contract: one step of the reference-data build.

A :class:`Stage` declares what it reads (``sources``: files relative to the shared folder, e.g.
``data-real/prices/lean_factor_files.csv``; glob patterns allowed), what it needs from earlier stages (``needs``:
output names), and what it hands back (``outputs``: lake datasets, written with a record schema and described in
``SOURCES.md`` by their :class:`Provenance`, or intermediates, handed to later stages and never written). Its
``run`` gets a :class:`Context` and returns one DataFrame per declared output. The driver
(:mod:`refdata.driver`) orders stages by their needs and refuses anything outside the declaration.

Example:
    >>> import pandas as pd
    >>> def double(ctx: Context) -> dict[str, pd.DataFrame]:
    ...     return {"doubled": ctx["numbers"].assign(x=lambda d: d["x"] * 2)}
    >>> stage = Stage("double", "Numbers doubled", double, needs=("numbers",), outputs=(intermediate("doubled"),))
    >>> stage.produces, stage.lake_outputs
    (('doubled',), ())
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from fdkit.errors import FdkitError

__all__ = ["Context", "Output", "Provenance", "Stage", "StageError", "dataset", "intermediate"]


class StageError(FdkitError, ValueError):
    """A stage (or the set of stages) breaks the contract: an undeclared source, input or output."""


@dataclass(frozen=True)
class Provenance:
    """What ``SOURCES.md`` says about a lake dataset.

    Attributes:
        sources: the files it comes from (as a reader would look them up).
        licence: the licence of those sources.
        method: how the rows are made from them.
        caveats: what a user should know before relying on it (empty: nothing beyond the method).
    """

    sources: str
    licence: str
    method: str
    caveats: str = ""


@dataclass(frozen=True)
class Output:
    """One name a stage produces.

    Attributes:
        name: the dataset (lake folder) or intermediate name; unique over all stages.
        lake: written to the lake (else an intermediate, handed to later stages only).
        schema: the record schema it is written and read back with (``None``: the rows are typed by ``typed``, then
            written with the schema :func:`fdkit.lake.io.dataset_schema` gives the name).
        typed: gives the frame its dtypes before it is written (for rows that follow no record schema exactly).
        provenance: the ``SOURCES.md`` entry of a lake dataset.
    """

    name: str
    lake: bool = True
    schema: str | None = None
    typed: Callable[[pd.DataFrame], pd.DataFrame] | None = None
    provenance: Provenance | None = None


def dataset(
    name: str,
    provenance: Provenance,
    *,
    schema: str | None = "",
    typed: Callable[[pd.DataFrame], pd.DataFrame] | None = None,
) -> Output:
    """A lake dataset output.

    Args:
        name: dataset name.
        provenance: its ``SOURCES.md`` entry.
        schema: record schema (default: the dataset's own name; ``None`` with ``typed`` for rows that follow no
            record schema exactly).
        typed: types the frame before it is written (with ``schema=None``).

    Returns:
        The output declaration.

    Example:
        >>> dataset("news", Provenance("text/x.csv", "CC0", "copied")).schema
        'news'
    """
    return Output(name, lake=True, schema=name if schema == "" else schema, typed=typed, provenance=provenance)


def intermediate(name: str) -> Output:
    """An intermediate output: handed to later stages, never written.

    Args:
        name: its name.

    Returns:
        The output declaration.

    Example:
        >>> intermediate("members").lake
        False
    """
    return Output(name, lake=False)


@dataclass(frozen=True)
class Stage:
    """One step of the build.

    Attributes:
        name: unique stage name.
        title: one line on what it makes.
        run: ``run(ctx) -> {output name: DataFrame}``, exactly the declared outputs.
        sources: files it reads, relative to the shared folder (``data-real/...``; glob patterns allowed).
        needs: names of earlier stages' outputs it reads (``ctx[name]``).
        outputs: what it produces.
    """

    name: str
    title: str
    run: Callable[[Context], Mapping[str, pd.DataFrame]]
    sources: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()
    outputs: tuple[Output, ...] = ()

    @property
    def produces(self) -> tuple[str, ...]:
        """The names of all outputs, in declaration order."""
        return tuple(o.name for o in self.outputs)

    @property
    def lake_outputs(self) -> tuple[Output, ...]:
        """The outputs written to the lake."""
        return tuple(o for o in self.outputs if o.lake)


@dataclass(frozen=True)
class Context:
    """What a running stage sees: its declared source files and the outputs of earlier stages it needs.

    Attributes:
        stage: the stage being run.
        roots: source folder name (``data-real``, ``data-real-2``, ...) -> its path.
        inputs: output name -> frame, the needs of the stage.
    """

    stage: Stage
    roots: Mapping[str, Path]
    inputs: Mapping[str, pd.DataFrame] = field(default_factory=dict)

    def __getitem__(self, name: str) -> pd.DataFrame:
        """A copy of an earlier output the stage declared it needs (a stage never changes another's frames).

        Args:
            name: the output name.

        Returns:
            A copy of the frame.

        Raises:
            StageError: the stage did not declare ``name`` in its needs.
        """
        if name not in self.stage.needs:
            raise StageError(f"stage {self.stage.name!r} reads {name!r} without declaring it in needs")
        return self.inputs[name].copy()

    def _declared(self, rel: str) -> None:
        if not any(rel == pat or fnmatch.fnmatchcase(rel, pat) for pat in self.stage.sources):
            raise StageError(f"stage {self.stage.name!r} reads {rel!r} without declaring it in sources")

    def resolve(self, rel: str) -> Path:
        """The path of a source path or pattern (relative to the shared folder), without checking its declaration.

        Args:
            rel: ``<source folder>/<path inside it>``.

        Returns:
            The absolute path.

        Example:
            >>> s = Stage("s", "t", lambda ctx: {}, sources=("data-real/a.csv",))
            >>> Context(s, {"data-real": Path("/x/dr")}).resolve("data-real/a.csv").as_posix()
            '/x/dr/a.csv'
        """
        root, _, inner = rel.partition("/")
        if root not in self.roots:
            raise StageError(f"stage {self.stage.name!r}: {rel!r} is in no known source folder {sorted(self.roots)}")
        return self.roots[root] / inner

    def source(self, rel: str) -> Path:
        """The path of one declared source file.

        Args:
            rel: the path relative to the shared folder; it must match one of the stage's ``sources``.

        Returns:
            The absolute path.

        Raises:
            StageError: ``rel`` is not declared.
        """
        self._declared(rel)
        return self.resolve(rel)

    def glob(self, pattern: str) -> list[Path]:
        """The files a declared source pattern matches, sorted.

        Args:
            pattern: a glob pattern exactly as declared in ``sources``.

        Returns:
            Sorted paths.

        Raises:
            StageError: the pattern is not declared.
        """
        if pattern not in self.stage.sources:
            raise StageError(f"stage {self.stage.name!r} globs {pattern!r} without declaring it in sources")
        path = self.resolve(pattern)
        return sorted(path.parent.glob(path.name))
