"""The one paginator used by every list endpoint.

It follows ``next_page_url`` exactly as the server gives it, treats ``limit`` as the total wanted across pages,
stops on the last page, restarts once from the original request (bypassing the cache) when the server says the
cursor is no longer valid or a followed page cannot be fetched (a cached first page may name a server that has
gone), and refuses to loop when a server repeats a page URL.

Example:
    >>> pages = {None: {"x": [1, 2], "next_page_url": "p2"}, "p2": {"x": [3]}}
    >>> collect(lambda url, refresh: pages[url], "x", limit=None).records
    [1, 2, 3]
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sized
from dataclasses import dataclass, field
from typing import Any

from fdkit.errors import InvalidCursorError, MissingPayloadError, PaginationError, TransportError, warn_user

__all__ = ["collect", "Collected", "progress_enabled"]

#: ``get(url_or_None, refresh)`` -> decoded JSON; ``None`` means "the original request"
PageGetter = Callable[[str | None, bool], dict[str, Any]]


@dataclass
class Collected:
    """Result of a pagination walk.

    Attributes:
        first: the first page's body (its non-array fields, e.g. ``ticker``, are kept for frames).
        records: all records, at most ``limit``.
        pages: number of pages fetched (including a restarted walk's pages).
        restarted: whether an invalid cursor forced a restart.
        chunks: with ``chunk=``, each page's rows as the getter gave them (Arrow parts), not joined.
    """

    first: dict[str, Any]
    records: list[Any] = field(default_factory=list)
    pages: int = 0
    restarted: bool = False
    chunks: list[Any] = field(default_factory=list)


def progress_enabled(progress: bool | None) -> bool:
    """Decide whether to show a progress bar.

    Args:
        progress: ``True``/``False`` to force; ``None`` shows it when stderr is a terminal or the code runs in a
            Jupyter kernel (where stderr is no terminal but a bar is drawn in the cell's output).

    Returns:
        Whether tqdm should draw.

    Example:
        >>> progress_enabled(False)
        False
    """
    if progress is not None:
        return bool(progress)
    if in_jupyter():
        return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def in_jupyter() -> bool:
    """Whether this code runs in a Jupyter kernel (an IPython shell that has a kernel), never importing IPython.

    Example:
        >>> in_jupyter()  # the test suite runs outside any kernel
        False
    """
    ipython = sys.modules.get("IPython")
    if ipython is None or "ipykernel" not in sys.modules:
        return False
    get = getattr(ipython, "get_ipython", None)
    shell = get() if callable(get) else None
    return getattr(shell, "kernel", None) is not None


class _NoBar:
    """A progress bar that is not drawn: what :func:`progress_bar` gives with ``disable=True``."""

    def __init__(self, iterable: Any = None) -> None:
        self.iterable = iterable

    def __iter__(self) -> Any:
        return iter(self.iterable if self.iterable is not None else ())

    def __enter__(self) -> _NoBar:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def update(self, n: float = 1) -> None:
        """Nothing to draw."""

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        """Nothing to draw."""

    def close(self) -> None:
        """Nothing to close."""


def progress_bar(iterable: Any = None, **kwargs: Any) -> Any:
    """A tqdm progress bar: the notebook widget where ipywidgets is installed, the text bar everywhere else.

    ``tqdm.auto`` warns in every notebook that lacks ipywidgets; fdkit never imports it there. A bar appears only
    once a call has taken half a second (``delay``): quick calls draw nothing.

    Args:
        iterable: what to wrap (``None`` for a manually updated bar).
        **kwargs: tqdm's keywords (``desc``, ``total``, ``unit``, ``disable`` ...).

    Returns:
        A tqdm instance.

    Example:
        >>> list(progress_bar([1, 2], disable=True))
        [1, 2]
    """
    import importlib.util

    if kwargs.get("disable"):  # no bar: nothing of tqdm imported (0.05 s of a process's first call)
        return _NoBar(iterable)
    if importlib.util.find_spec("ipywidgets") is not None:
        from tqdm.auto import tqdm
    else:
        from tqdm.std import tqdm
    kwargs.setdefault("delay", 0.5)
    return tqdm(iterable, **kwargs)


def collect(
    get: PageGetter,
    key: str,
    *,
    limit: int | None,
    progress: bool | None = False,
    description: str = "",
    max_pages: int = 100_000,
    record_key: tuple[str, ...] = (),
    chunk: Callable[[dict[str, Any]], Sized] | None = None,
    where: str = "",
) -> Collected:
    """Walk the pages of one request.

    Args:
        get: fetches a page: ``get(None, refresh)`` is the original request, ``get(url, refresh)`` follows a
            ``next_page_url`` verbatim; ``refresh`` asks to bypass the cache.
        key: the response's array key (e.g. ``"prices"``).
        limit: total records wanted; ``None`` for all.
        progress: show a page progress bar (see :func:`progress_enabled`).
        description: label of the progress bar.
        max_pages: the most pages a walk without a limit may take.
        record_key: the fields that identify a record (``Endpoint.record_key``); a record whose key was seen on an
            earlier page is dropped. Without a key nothing is dropped (identical rows can be distinct facts).
        chunk: a page's rows as one sized object (an Arrow page between fdkit peers): the walk keeps them in
            ``chunks``, unjoined, and leaves ``records`` empty; the caller joins them and cuts them to ``limit``.
        where: the request's path, for errors.

    Returns:
        A :class:`Collected`.

    Raises:
        InvalidCursorError: when the cursor is rejected again after one restart.
        MissingPayloadError: a page without ``key`` (not an empty page: an answer of something else).
        PaginationError: when the walk would not end: a page URL seen before, a page with no records that still
            names a next page, or more than ``max_pages`` pages (with a ``limit`` the walk ends at it, since every
            page holds a record).

    Records repeated across pages (same ``record_key``) are dropped and counted in one warning.

    Example:
        >>> pages = {None: {"x": [1, 2], "next_page_url": "p2"}, "p2": {"x": [3, 4]}}
        >>> collect(lambda u, r: pages[u], "x", limit=3).records
        [1, 2, 3]
    """
    pages = 0
    bar = None
    try:
        for attempt in range(2):
            refresh = attempt > 0
            try:
                first = get(None, refresh)
                pages += 1
                chunks = [chunk(first)] if chunk else []
                records = [] if chunk else list(_records(first, key, where))
                count = len(chunks[0]) if chunk else len(records)
                seen: set[str] = set()
                next_url = first.get("next_page_url")
                while next_url and (limit is None or count < limit):
                    if next_url in seen:
                        raise PaginationError(
                            "the service returned the same next_page_url twice; stopping instead of looping",
                            error="Pagination loop",
                        )
                    if pages > max_pages:  # with a limit the walk ends by itself: every page holds a record
                        raise PaginationError(
                            f"more than {max_pages} pages; stopping instead of walking on",
                            error="Pagination runaway",
                        )
                    seen.add(next_url)
                    if bar is None and progress_enabled(progress):
                        bar = progress_bar(desc=description or key, unit="page", initial=pages, leave=False)
                    page = get(next_url, refresh)
                    pages += 1
                    if bar is not None:
                        bar.update(1)
                    got = chunk(page) if chunk else _records(page, key, where)
                    next_url = page.get("next_page_url")
                    if not len(got) and next_url:
                        raise PaginationError(
                            "the service returned a page with no records that names another page; stopping",
                            error="Empty page",
                        )
                    if chunk:
                        chunks.append(got)
                    else:
                        records.extend(got)  # type: ignore[arg-type]  # without chunk=, a page's record list
                    count += len(got)
            except InvalidCursorError:
                if refresh:
                    raise
                continue
            except TransportError:
                # a next_page_url from a cached first page may point at a server that is gone (an embedded
                # server's old port): start again from the live server, once
                if refresh or pages == 0:
                    raise
                continue
            if record_key and pages > 1:  # one page cannot repeat an earlier one
                records = _drop_duplicates(records, record_key, description or key)
            if limit is not None:
                del records[limit:]
            return Collected(first=first, records=records, pages=pages, restarted=refresh, chunks=chunks)
        raise AssertionError("unreachable")  # pragma: no cover
    finally:
        if bar is not None:
            bar.close()


def _drop_duplicates(records: list[Any], fields: tuple[str, ...], what: str) -> list[Any]:
    """Records whose key repeats are kept once (the first), and counted in a warning."""
    seen: set[tuple[Any, ...]] = set()
    out = []
    for r in records:
        k = tuple(str(r.get(f)) for f in fields) if isinstance(r, dict) else (repr(r),)
        if k not in seen:
            seen.add(k)
            out.append(r)
    if len(out) < len(records):
        warn_user(
            f"fdkit: {what}: the service repeated {len(records) - len(out)} record(s) across pages; each is kept once"
        )
    return out


def _records(body: dict[str, Any], key: str, where: str) -> list[Any]:
    if key not in body:
        raise MissingPayloadError.of(where or key, key, body)
    value = body[key]
    if value is None:
        return []
    if isinstance(value, list):
        return value
    return [value]
