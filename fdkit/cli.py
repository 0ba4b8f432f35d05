"""The ``fdkit`` command line: ``serve``, ``demo``, ``cache``.

Example:
    >>> main(["cache", "info", "--cache-dir", tempfile.mkdtemp()])
    no cache files
    0
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile  # noqa: F401  (used by the doctest)
from collections.abc import Sequence

__all__ = ["main"]


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from .lake import default_data_dir, list_datasets
    from .server.app import create_app
    from .server.auth import load_keys

    data = args.data or default_data_dir()
    keys = load_keys(args.keys)
    app = create_app(data, keys)
    names = list_datasets(data)
    print(f"fdkit serve: {len(names)} datasets from {data} on http://{args.host}:{args.port}", file=sys.stderr)
    if not args.keys and not os.environ.get("FDKIT_SERVER_KEYS"):
        print(f"fdkit serve: no keys configured; generated key: {keys.first}", file=sys.stderr)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level, access_log=False)
    return 0


def _cache(args: argparse.Namespace) -> int:
    from .cache import cache_info, clear_cache

    if args.action == "info":
        rows = cache_info(args.cache_dir)
        if not rows:
            print("no cache files")
        for r in rows:
            print(f"{r['namespace']}  {r['responses']:>7} responses  {r['bytes'] / 1e6:8.2f} MB  {r['path']}")
    else:
        print(f"removed {clear_cache(args.cache_dir)} file(s)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser of the ``fdkit`` command.

    Returns:
        The parser.

    Example:
        >>> build_parser().parse_args(["serve", "--port", "0"]).port
        0
    """
    p = argparse.ArgumentParser(prog="fdkit", description="Financial data as typed pandas frames.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    s = sub.add_parser("serve", help="serve the Financial Data Service over a Parquet lake",
                       description="Serve the Financial Data Service API over a Parquet lake.")  # fmt: skip
    s.add_argument("--data", help="lake directory (default: the bundled reference data)")
    s.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1)")
    s.add_argument("--port", type=int, default=8000, help="TCP port (default 8000)")
    s.add_argument("--keys", help="keys file: one key per line, optionally followed by a plan (pro|free)")
    s.add_argument("--log-level", default="warning", choices=["debug", "info", "warning", "error"])
    s.set_defaults(func=_serve)

    c = sub.add_parser("cache", help="inspect or clear the on-disk HTTP cache")
    c.add_argument("action", choices=["info", "clear"])
    c.add_argument("--cache-dir", help="cache directory (default: $FDKIT_CACHE_DIR or the user cache dir)")
    c.set_defaults(func=_cache)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line.

    Args:
        argv: arguments (default ``sys.argv[1:]``).

    Returns:
        The exit code.
    """
    args = build_parser().parse_args(argv)
    from .errors import FdkitError

    try:
        return int(args.func(args) or 0)
    except FdkitError as exc:
        print(f"fdkit: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
