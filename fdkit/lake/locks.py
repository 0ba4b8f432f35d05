"""One writer at a time per dataset: an exclusive lock file per dataset of a lake, reentrant within a thread.

Every fdkit writer of a lake (``fdkit mirror``, the webhook receiver, :func:`fdkit.lake.io.write_dataset`, ``fdkit
lake convert|optimize|vacuum``) holds the dataset's lock while it reads what it decides on and commits: the lock is
``flock`` on ``<lake>/_locks/<dataset>.lock`` (so it holds between processes, and between threads of one process:
each acquisition opens the file anew), released by the OS when a writer dies. A thread that holds a dataset's lock
may take it again (nested seams: a mirror's commit converts the dataset first); locks of several datasets are taken
in sorted order, so two writers never wait on each other in a circle.

Example:
    >>> import tempfile
    >>> root = tempfile.mkdtemp()
    >>> with dataset_lock(root, "prices"):
    ...     with dataset_lock(root, "prices"):      # the same thread: reentrant
    ...         held(root, "prices")
    True
    >>> held(root, "prices")
    False
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: the threads of one process still exclude each other
    fcntl = None  # type: ignore[assignment]

__all__ = ["LOCK_DIR", "dataset_lock", "datasets_lock", "held"]

#: the folder of a lake's lock files (no Parquet in it: never listed as a dataset)
LOCK_DIR = "_locks"

_local = threading.local()
_process_locks: dict[str, threading.Lock] = {}
_guard = threading.Lock()


def _key(root: str | os.PathLike[str], name: str) -> str:
    return f"{Path(root).resolve()}\0{name}"


def _counts() -> dict[str, int]:
    if not hasattr(_local, "counts"):
        _local.counts = {}
    counts: dict[str, int] = _local.counts
    return counts


def held(root: str | os.PathLike[str], name: str) -> bool:
    """Whether this thread holds the lock of dataset ``name`` of lake ``root``.

    Example:
        >>> held("/nonexistent", "prices")
        False
    """
    return _counts().get(_key(root, name), 0) > 0


@contextmanager
def dataset_lock(root: str | os.PathLike[str], name: str) -> Iterator[None]:
    """Hold the exclusive write lock of one dataset (waits for the writer holding it; reentrant in a thread).

    Args:
        root: lake root (a local folder).
        name: dataset name (a plain path segment: callers check it).

    Example:
        >>> import tempfile
        >>> with dataset_lock(tempfile.mkdtemp(), "news"):
        ...     pass
    """
    key = _key(root, name)
    counts = _counts()
    if counts.get(key, 0):
        counts[key] += 1
        try:
            yield
        finally:
            counts[key] -= 1
        return
    with _guard:
        local_lock = _process_locks.setdefault(key, threading.Lock())
    folder = Path(root) / LOCK_DIR
    folder.mkdir(parents=True, exist_ok=True)
    with local_lock:  # the threads of this process (and the only lock where flock is absent)
        fd = os.open(folder / f"{name}.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)  # other processes
            counts[key] = 1
            try:
                yield
            finally:
                counts[key] = 0
        finally:
            os.close(fd)  # releases the flock


@contextmanager
def datasets_lock(root: str | os.PathLike[str], names: list[str] | tuple[str, ...] | set[str]) -> Iterator[None]:
    """Hold the locks of several datasets, taken in sorted order (no two writers wait on each other in a circle).

    Example:
        >>> import tempfile
        >>> root = tempfile.mkdtemp()
        >>> with datasets_lock(root, {"b", "a"}):
        ...     held(root, "a") and held(root, "b")
        True
    """
    with ExitStack() as stack:
        for name in sorted(set(names)):
            stack.enter_context(dataset_lock(root, name))
        yield
