"""Where a lake lives: a local folder, or a prefix in an object store (``s3://bucket/lake``) read through pyarrow.fs.

A lake root is either a path or a URL. A URL is resolved by :func:`pyarrow.fs.FileSystem.from_uri`, which takes the
endpoint, credentials and region from the standard AWS environment variables (``AWS_ENDPOINT_URL``,
``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``, ``AWS_DEFAULT_REGION``) and the AWS
configuration files, as every AWS tool does. Everything else in :mod:`fdkit.lake` lists and opens files through
the :class:`Location` of a root, so partition pruning and row-group statistics apply to both kinds alike.

Example:
    >>> loc = locate("/tmp/some-lake")
    >>> loc.local, loc.path
    (True, '/tmp/some-lake')
    >>> is_url("s3://bucket/lake"), is_url("data"), lake_root("s3://bucket/lake/")
    (True, False, 's3://bucket/lake')
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path, PurePath, PurePosixPath

import pyarrow.fs as pafs

from fdkit.errors import LakeError, without_backtrace

__all__ = [
    "Location",
    "locate",
    "is_url",
    "lake_root",
    "LakeRoot",
    "StoreUnreachable",
    "store_timeouts",
    "unreachable",
]

#: a lake root as the lake layer keeps it: a local folder, or an object-store URL (text, never a Path)
LakeRoot = Path | str

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
#: the object stores a lake may live in (what pyarrow.fs resolves with the standard environment)
SCHEMES = ("s3",)

#: an object store's call has its own bounds (pyarrow's defaults retry a stalled store for about 100 s): seconds to
#: connect, seconds without a byte before an attempt is given up, and attempts per call; ``FDKIT_S3_CONNECT_TIMEOUT``,
#: ``FDKIT_S3_REQUEST_TIMEOUT`` and ``FDKIT_S3_ATTEMPTS`` override them
CONNECT_TIMEOUT = 2.0
REQUEST_TIMEOUT = 4.0
ATTEMPTS = 2

#: what the AWS SDK (curl) and delta-rs (object_store) say when a store cannot be reached or does not answer
_UNREACHABLE = re.compile(
    r"NETWORK_CONNECTION|curlCode: (?:6|7|28|52|56)\b|Timeout was reached|Operation too slow|Could not connect"
    r"|Connection refused|connection reset|operation timed out|error sending request|timed out",
    re.IGNORECASE,
)


class StoreUnreachable(LakeError):
    """The object store a lake lives in did not answer within its bounds (503: the request may be retried)."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(
            f"the lake's object store at {url} did not answer ({reason[:200]}); what the service holds "
            "in memory is still served; retry later",
            status=503,
            error="Lake unreachable",
        )
        self.url = url


def store_timeouts() -> tuple[float, float, int]:
    """The bounds of one object-store call: ``(connect seconds, seconds without a byte, attempts)``.

    Example:
        >>> store_timeouts()[2] >= 1
        True
    """

    def number(name: str, default: float) -> float:
        try:
            return max(float(os.environ.get(name, default)), 0.1)
        except ValueError:
            return default

    connect = number("FDKIT_S3_CONNECT_TIMEOUT", CONNECT_TIMEOUT)
    request = number("FDKIT_S3_REQUEST_TIMEOUT", REQUEST_TIMEOUT)
    return connect, request, max(int(number("FDKIT_S3_ATTEMPTS", ATTEMPTS)), 1)


def unreachable(exc: BaseException, url: str | None = None) -> StoreUnreachable | None:
    """The :class:`StoreUnreachable` an object store's failure ``exc`` stands for (``None``: another failure).

    Example:
        >>> unreachable(OSError("AWS Error NETWORK_CONNECTION during HeadObject operation"), "s3://b/lake").status
        503
        >>> unreachable(OSError("Parquet magic bytes not found")) is None
        True
    """
    if isinstance(exc, StoreUnreachable):
        return exc
    text = " ".join(str(exc).split())
    if not isinstance(exc, OSError | LakeError) and not type(exc).__module__.startswith("deltalake"):
        return None
    if not _UNREACHABLE.search(text):
        return None
    found = re.search(r"s3://[^\s:;,)]+", text)
    return StoreUnreachable(url or (found.group(0) if found else "its URL"), _reason(exc))


def is_url(root: object) -> bool:
    """Whether ``root`` names a lake by URL (``s3://...``) rather than by a local path.

    Example:
        >>> is_url("s3://b/lake"), is_url(Path("/data"))
        (True, False)
    """
    return isinstance(root, str) and _URL.match(root) is not None


def lake_root(root: str | os.PathLike[str]) -> LakeRoot:
    """A lake root as the lake layer keeps it: a URL stays text (never a ``Path``, which would fold ``//``).

    Args:
        root: a folder or an object-store URL.

    Returns:
        The URL without a trailing ``/``, or the folder as a :class:`~pathlib.Path`.

    Raises:
        LakeError: a URL of a scheme other than ``s3://``.

    Example:
        >>> lake_root("s3://bucket/lake/"), lake_root("data")
        ('s3://bucket/lake', PosixPath('data'))
    """
    if not is_url(root):
        return Path(root).expanduser()
    text = str(root).rstrip("/")
    scheme = text.split("://", 1)[0].lower()
    if scheme not in SCHEMES:
        raise LakeError(f"cannot read a lake at {text}: the {scheme}:// scheme is not supported (a folder or s3://)")
    return text


@dataclass(frozen=True)
class Location:
    """A lake root resolved to a pyarrow filesystem and the root's path inside it.

    Attributes:
        fs: the filesystem (local, or S3 configured from the environment).
        path: the root inside ``fs`` (``/abs/folder`` or ``bucket/prefix``).
        url: the root as it was given (what messages name).
    """

    fs: pafs.FileSystem
    path: str
    url: str

    @property
    def local(self) -> bool:
        """Whether the lake is a folder of this machine."""
        return isinstance(self.fs, pafs.LocalFileSystem)

    def join(self, *parts: str) -> PurePath:
        """The path of ``parts`` below the root (a :class:`~pathlib.Path` for a local lake).

        Example:
            >>> locate("/lake").join("prices", "part-0.parquet").as_posix()
            '/lake/prices/part-0.parquet'
        """
        base: PurePath = Path(self.path) if self.local else PurePosixPath(self.path)
        return base.joinpath(*parts)

    def infos(self, below: str = "") -> list[pafs.FileInfo]:
        """Every file and folder below the root (or below ``below`` inside it), recursively; none when absent.

        Raises:
            LakeError: the store refused the listing (no such bucket, credentials refused, unreachable), naming the
                URL and the store's reason.
        """
        where = str(self.join(below)) if below else self.path
        try:
            return list(self.fs.get_file_info(pafs.FileSelector(where, recursive=True)))
        except FileNotFoundError:  # no such folder or prefix (a missing bucket is another error: said below)
            return []
        except OSError as exc:
            failed = LakeError(f"cannot list the lake at {self.url}: {_reason(exc)}")
            raise unreachable(exc, self.url) or failed from None

    def info(self, *parts: str) -> pafs.FileInfo:
        """What the store says about one path below the root (``type`` is ``NotFound`` when it is absent).

        Raises:
            LakeError: the store refused the request, naming the URL.
        """
        try:
            return self.fs.get_file_info(str(self.join(*parts)))
        except OSError as exc:
            failed = LakeError(f"cannot read the lake at {self.url}: {_reason(exc)}")
            raise unreachable(exc, self.url) or failed from None


def locate(root: str | os.PathLike[str]) -> Location:
    """The :class:`Location` of a lake root (a folder, or ``s3://bucket/prefix`` configured from the environment).

    Args:
        root: a folder or an object-store URL.

    Returns:
        The location (nothing is read yet).

    Raises:
        LakeError: an unsupported scheme, or a URL pyarrow cannot resolve (the message names it).

    Example:
        >>> locate("/srv/lake").url
        '/srv/lake'
    """
    kept = lake_root(root)
    if isinstance(kept, Path):
        return Location(pafs.LocalFileSystem(), str(kept), str(kept))
    fs, path = _store(kept, tuple(os.environ.get(k) for k in _ENVIRONMENT), store_timeouts())
    return Location(fs, path.rstrip("/"), kept)


#: the environment a store's filesystem is made from (a change makes a new one)
_ENVIRONMENT = (
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_S3",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_DEFAULT_REGION",
    "AWS_REGION",
    "AWS_PROFILE",
)
_STORES: dict[tuple[object, ...], tuple[pafs.FileSystem, str]] = {}
_STORES_LOCK = threading.Lock()


def _store(url: str, env: tuple[str | None, ...], bounds: tuple[float, float, int]) -> tuple[pafs.FileSystem, str]:
    """The filesystem of an object-store URL with :func:`store_timeouts`' bounds (one per URL and environment).

    pyarrow resolves the URL as every AWS tool would (endpoint, region, credentials from the environment); the
    filesystem is then made again with the same endpoint and region and fdkit's own timeouts and attempts.
    """
    key = (url, env, bounds)
    with _STORES_LOCK:
        got = _STORES.get(key)
    if got is not None:
        return got
    try:
        resolved, path = pafs.FileSystem.from_uri(url)
        fs: pafs.FileSystem = resolved
        if isinstance(resolved, pafs.S3FileSystem):
            connect, request, attempts = bounds
            retry = pafs.AwsStandardS3RetryStrategy(max_attempts=attempts)
            options: dict[str, object] = {
                "region": resolved.region,
                "connect_timeout": connect,
                "request_timeout": request,
                "retry_strategy": retry,
            }
            endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
            if endpoint:
                scheme, _, host = endpoint.rpartition("://")
                options.update(endpoint_override=host.rstrip("/"), scheme=scheme or "https")
            fs = pafs.S3FileSystem(**options)
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise LakeError(f"cannot open the lake at {url}: {_reason(exc)}") from None
    with _STORES_LOCK:
        if len(_STORES) > 64:
            _STORES.clear()
        _STORES[key] = (fs, path)
    return fs, path


def _reason(exc: BaseException) -> str:
    """The store's own reason, one line, without the request ids AWS appends."""
    text = " ".join(without_backtrace(str(exc)).split())
    return re.sub(r"\s*\(Request ID: [^)]*\)", "", text)[:300]
