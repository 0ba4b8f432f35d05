"""The driver: checks a set of stages, orders them by what they need, runs them and checks what they hand back.

The order is deterministic: a stage runs once every stage producing one of its needs has run; among the stages
ready at one time, the one registered first runs first. The driver refuses (:class:`~refdata.stage.StageError`)
two stages with one name or one output, a need no stage produces, a circle of needs, a missing source file, and a
stage that hands back anything but exactly its declared outputs, each a DataFrame.

Example:
    >>> import pandas as pd
    >>> from refdata.stage import Stage, intermediate
    >>> make = Stage("make", "t", lambda ctx: {"a": pd.DataFrame({"x": [1, 2]})}, outputs=(intermediate("a"),))
    >>> total = Stage("total", "t", lambda ctx: {"b": ctx["a"].sum().to_frame("sum")}, needs=("a",),
    ...               outputs=(intermediate("b"),))
    >>> [s.name for s in order([total, make])]
    ['make', 'total']
    >>> run_stages([total, make], {})["b"]["sum"].tolist()
    [3]
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from refdata.stage import Context, Stage, StageError

__all__ = ["check", "missing_sources", "order", "run_stage", "run_stages"]


def check(stages: Iterable[Stage]) -> dict[str, Stage]:
    """Check that a set of stages fits together.

    Args:
        stages: the registered stages.

    Returns:
        Output name -> the stage producing it.

    Raises:
        StageError: two stages share a name or an output, or a stage needs a name no stage produces.

    Example:
        >>> from refdata.stage import Stage
        >>> try:
        ...     check([Stage("s", "t", lambda ctx: {}, needs=("nowhere",))])
        ... except StageError as exc:
        ...     print(exc)
        stage 's' needs 'nowhere', which no stage produces
    """
    names: set[str] = set()
    producer: dict[str, Stage] = {}
    for stage in stages:
        if stage.name in names:
            raise StageError(f"two stages are named {stage.name!r}")
        names.add(stage.name)
        if len(set(stage.produces)) != len(stage.produces):
            raise StageError(f"stage {stage.name!r} declares an output twice: {list(stage.produces)}")
        for name in stage.produces:
            if name in producer:
                raise StageError(f"{name!r} is produced by both {producer[name].name!r} and {stage.name!r}")
            producer[name] = stage
    for stage in stages:
        for need in stage.needs:
            if need not in producer:
                raise StageError(f"stage {stage.name!r} needs {need!r}, which no stage produces")
            if producer[need] is stage:
                raise StageError(f"stage {stage.name!r} needs its own output {need!r}")
    return producer


def order(stages: Sequence[Stage]) -> list[Stage]:
    """The stages in run order: each after the producers of its needs; ties in registration order.

    Args:
        stages: the registered stages.

    Returns:
        The same stages, ordered.

    Raises:
        StageError: the stages do not fit together (:func:`check`) or their needs go round in a circle.
    """
    producer = check(stages)
    position = {s.name: i for i, s in enumerate(stages)}
    waits_on = {s.name: {producer[n].name for n in s.needs} for s in stages}
    done: list[Stage] = []
    left = list(stages)
    while left:
        ready = [s for s in left if waits_on[s.name] <= {d.name for d in done}]
        if not ready:
            circle = sorted(s.name for s in left)
            raise StageError(f"the needs of these stages go round in a circle: {circle}")
        first = min(ready, key=lambda s: position[s.name])
        done.append(first)
        left.remove(first)
    return done


def missing_sources(stages: Iterable[Stage], roots: Mapping[str, Path]) -> list[str]:
    """The declared sources that match no file.

    Args:
        stages: the stages.
        roots: source folder name -> path.

    Returns:
        ``stage: source`` for each declared source (or pattern) without a file.
    """
    out = []
    for stage in stages:
        ctx = Context(stage, roots)
        for rel in stage.sources:
            try:
                path = ctx.resolve(rel)
            except StageError:
                out.append(f"{stage.name}: {rel}")
                continue
            if not any(path.parent.glob(path.name)):
                out.append(f"{stage.name}: {rel}")
    return out


def run_stage(stage: Stage, roots: Mapping[str, Path], inputs: Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Run one stage and check its answer.

    Args:
        stage: the stage.
        roots: source folder name -> path.
        inputs: at least the stage's needs.

    Returns:
        Its outputs, exactly the declared names.

    Raises:
        StageError: a need is missing from ``inputs``, or the stage hands back an undeclared name, misses a declared
            one, or hands back something that is not a DataFrame.
    """
    missing = [n for n in stage.needs if n not in inputs]
    if missing:
        raise StageError(f"stage {stage.name!r} needs {missing}, which no earlier stage produced")
    got = stage.run(Context(stage, roots, {n: inputs[n] for n in stage.needs}))
    if not isinstance(got, Mapping):
        raise StageError(f"stage {stage.name!r} returned {type(got).__name__}, not a mapping of names to frames")
    undeclared = sorted(set(got) - set(stage.produces))
    if undeclared:
        raise StageError(f"stage {stage.name!r} produced undeclared {undeclared} (declared {list(stage.produces)})")
    absent = [n for n in stage.produces if n not in got]
    if absent:
        raise StageError(f"stage {stage.name!r} did not produce its declared {absent}")
    for name, frame in got.items():
        if not isinstance(frame, pd.DataFrame):
            raise StageError(f"stage {stage.name!r} produced {name!r} as {type(frame).__name__}, not a DataFrame")
    return {n: got[n] for n in stage.produces}


def run_stages(
    stages: Sequence[Stage],
    roots: Mapping[str, Path],
    *,
    on_done: Callable[[Stage, float], None] | None = None,
) -> dict[str, pd.DataFrame]:
    """Run stages in dependency order and collect every output.

    Args:
        stages: the registered stages.
        roots: source folder name -> path.
        on_done: called with each stage and its run time in seconds.

    Returns:
        Output name -> frame, for every output of every stage.

    Raises:
        StageError: see :func:`order` and :func:`run_stage`.
    """
    results: dict[str, pd.DataFrame] = {}
    for stage in order(stages):
        start = time.perf_counter()
        results.update(run_stage(stage, roots, results))
        if on_done is not None:
            on_done(stage, time.perf_counter() - start)
    return results
