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
from dataclasses import dataclass
from pathlib import Path, PurePath, PurePosixPath

import pyarrow.fs as pafs

from fdkit.errors import LakeError

__all__ = ["Location", "locate", "is_url", "lake_root", "LakeRoot"]

#: a lake root as the lake layer keeps it: a local folder, or an object-store URL (text, never a Path)
LakeRoot = Path | str

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
#: the object stores a lake may live in (what pyarrow.fs resolves with the standard environment)
SCHEMES = ("s3",)


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
            raise LakeError(f"cannot list the lake at {self.url}: {_reason(exc)}") from None

    def info(self, *parts: str) -> pafs.FileInfo:
        """What the store says about one path below the root (``type`` is ``NotFound`` when it is absent).

        Raises:
            LakeError: the store refused the request, naming the URL.
        """
        try:
            return self.fs.get_file_info(str(self.join(*parts)))
        except OSError as exc:
            raise LakeError(f"cannot read the lake at {self.url}: {_reason(exc)}") from None


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
    try:
        fs, path = pafs.FileSystem.from_uri(kept)
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise LakeError(f"cannot open the lake at {kept}: {_reason(exc)}") from None
    return Location(fs, path.rstrip("/"), kept)


def _reason(exc: BaseException) -> str:
    """The store's own reason, one line, without the request ids AWS appends."""
    text = " ".join(str(exc).split())
    return re.sub(r"\s*\(Request ID: [^)]*\)", "", text)[:300]
