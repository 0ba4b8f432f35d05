"""The ``fdkit`` command line: ``demo``, ``get``, ``serve``, ``cache``.

Example:
    >>> main(["cache", "info", "--cache-dir", tempfile.mkdtemp()])
    no cache files
    0
"""

from __future__ import annotations

import argparse
import io
import os
import re
import secrets
import sys
import tempfile  # noqa: F401  (used by the doctest)
import warnings
from collections.abc import Sequence
from typing import Any, NoReturn, TextIO
from urllib.parse import urlsplit

from fdkit.catalog.contracts import CONTRACTS, DEFAULT_CONTRACT
from fdkit.errors import suggest

__all__ = ["main"]


def _announce(
    args: argparse.Namespace, names: list[str], data: str | os.PathLike[str], port: int, first_key: str | None
) -> None:
    """The startup lines of ``fdkit serve``: the lake, the data packages' datasets, a generated key."""
    print(
        f"fdkit serve: {len(names)} datasets from {data} on http://{args.host}:{port}"
        f"{f' ({args.workers} worker processes)' if args.workers > 1 else ''}",
        file=sys.stderr,
    )
    other = "2026" if args.contract == "seed" else "seed"
    print(
        f"fdkit serve: the {args.contract} contract{' (every endpoint needs a key)' if args.contract == 'seed' else ''}"
        f"; --contract {other} serves the {other} contract (docs/CONTRACTS.md: where they differ)",
        file=sys.stderr,
    )
    for line in _package_lines(data):
        print(f"fdkit serve: {line}", file=sys.stderr)
    if not args.keys and not os.environ.get("FDKIT_SERVER_KEYS"):
        print(f"fdkit serve: no keys configured; generated key: {first_key}", file=sys.stderr)


def _checked_serve_args(args: argparse.Namespace) -> str | None:
    """``fdkit serve``'s settings argparse cannot check; returns the cursor secret (or ``None``: a random one)."""
    if args.workers < 1:
        raise _UsageError(f"--workers must be 1 or more, not {args.workers}")
    if args.contract not in CONTRACTS:  # (argparse checks a value given, not a default from FDKIT_CONTRACT)
        raise _UsageError(f"FDKIT_CONTRACT={args.contract!r} is no contract; the service keeps {', '.join(CONTRACTS)}")
    secret = args.cursor_secret or os.environ.get("FDKIT_CURSOR_SECRET")
    if secret is not None and len(secret) < 32:
        raise _UsageError("the cursor secret must be at least 32 characters")
    return secret


def _serve(args: argparse.Namespace) -> int:
    import socket

    import uvicorn

    from fdkit.lake.io import default_lake, require_lake
    from fdkit.server.app import create_app
    from fdkit.server.auth import KeysFileError, load_keys
    from fdkit.server.store import parse_bytes

    data = args.data or default_lake()
    try:
        memory = parse_bytes(args.memory)
    except ValueError as exc:
        raise _UsageError(f"--memory: {exc}") from None
    names = require_lake(data)
    try:
        keys = load_keys(args.keys, allow_short=args.allow_short_keys)
    except OSError as exc:
        raise _UsageError(f"cannot read the keys file {args.keys}: {exc.strerror or exc}") from None
    except KeysFileError as exc:
        raise _UsageError(str(exc)) from None
    secret = _checked_serve_args(args)
    sock = socket.socket(socket.AF_INET6 if ":" in args.host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((args.host, args.port))
    except OSError as exc:
        sock.close()
        raise _UsageError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from None
    port = sock.getsockname()[1]
    public = args.public_url or f"http://{args.host}:{port}"
    _announce(args, names, data, port, keys.first)
    # keep-alive connections idle for 5 s are closed; headers are capped by the HTTP parser (httptools/h11); a
    # connection that does not send a whole request head within FDKIT_HEADER_TIMEOUT (10 s) is closed
    common = {
        "log_level": args.log_level,
        "access_log": False,
        "timeout_keep_alive": 5,
        "http": "fdkit.server.protocol:HttpProtocol",
    }
    if args.workers > 1:
        # worker processes build their own app from the environment, sharing one listening socket, the keys and
        # the cursor secret (a cursor one worker issues opens on any other)
        os.environ.update(
            {
                "FDKIT_DATA": str(data),
                "FDKIT_PUBLIC_URL": public,
                "FDKIT_SERVER_KEYS": ",".join(f"{k}:{p}" for k, p in keys.plans.items()),
                "FDKIT_CURSOR_SECRET": secret or secrets.token_urlsafe(48),
                "FDKIT_SERVER_MEMORY": str(memory),
                "FDKIT_CONTRACT": args.contract,
            }
        )
        if args.allow_short_keys:
            os.environ["FDKIT_ALLOW_SHORT_KEYS"] = "1"
        # uvicorn binds the port itself: a socket handed over by descriptor is taken for a Unix socket, and its
        # TCP connections then wait on delayed acknowledgements (40 ms a request, measured)
        sock.close()
        uvicorn.run(
            "fdkit.server.app:app_from_env", factory=True, workers=args.workers, host=args.host, port=port, **common
        )
        return 0
    cursor = secret.encode() if secret else None
    app = create_app(data, keys, public_url=public, cursor_secret=cursor, memory_bytes=memory, contract=args.contract)
    uvicorn.Server(uvicorn.Config(app, **common)).run(sockets=[sock])
    return 0


def _package_lines(data: str | os.PathLike[str]) -> list[str]:
    """What ``fdkit serve`` says of the installed data packages (``fdkit-history``): which datasets each serves.

    The bundled lake serves a package's datasets beside its own; a lake of the user's is served as it is, which
    is said too, so that a package's datasets missing from it are no surprise.

    Example:
        >>> from fdkit.lake import default_data_dir
        >>> from fdkit.lake.extensions import data_packages
        >>> lines = _package_lines(default_data_dir())
        >>> all(str(p) in " ".join(lines) for p in data_packages())
        True
    """
    from fdkit.lake.extensions import DataPackage, data_packages
    from fdkit.lake.io import list_datasets
    from fdkit.lake.reader import LakeReader

    reader = LakeReader(data)
    by_package: dict[DataPackage, list[str]] = {}
    for name, package in reader.from_packages().items():
        by_package.setdefault(package, []).append(name)
    own = set(list_datasets(reader.root))
    lines: list[str] = []
    for package, served in by_package.items():
        # a bundled dataset the package holds too is served as one (fdkit-history's S&P 500 bars in prices)
        joined = sorted(own & set(list_datasets(package.root)))
        rows = f"; and rows of the bundled {', '.join(joined)}" if joined else ""
        lines.append(
            f"{len(served)} datasets from the installed data package {package} ({package.root}): "
            f"{', '.join(served)}{rows}"
        )
    if not reader.packages and data_packages():
        names, many = ", ".join(str(p) for p in data_packages()), len(data_packages()) > 1
        lines.append(
            f"the installed data package{'s' if many else ''} {names} {'are' if many else 'is'} not served "
            f"over {data} (only over the bundled lake)"
        )
    return lines


def _demo(args: argparse.Namespace) -> int:
    """The main job: a price panel, a statement table, a Parquet file and a plot, from whatever service is set."""
    import matplotlib

    matplotlib.use("Agg")
    from pathlib import Path

    import pandas as pd

    import fdkit

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tickers = [t.upper() for t in args.tickers]
    prices = fdkit.prices(tickers, start_date=args.start_date, end_date=args.end_date, progress=False, errors="ignore")
    # the statements filed by the window's end: what was known then (no look-ahead), priced as traded then
    fin = fdkit.financials(tickers, period="annual", limit=3, errors="ignore", as_of=args.end_date)
    if prices.empty:  # a request the data refuses: exit code 1, as `fdkit get` of an unknown ticker
        raise _no_prices(tickers, args.start_date, args.end_date)
    ratios = fin.fds.ratios(prices=prices)
    print(f"Price panel: {len(prices):,} daily bars of {', '.join(tickers)} ({args.start_date} .. {args.end_date})")
    _say_missing("prices", tickers, prices)
    with pd.option_context("display.width", 120, "display.max_columns", 8, "display.float_format", "{:,.2f}".format):
        print(prices.fds.wide("close").tail(5))
    print()
    print(f"Latest annual statements filed by {args.end_date} and their ratios (money in USD bn):")
    _say_missing("annual statements", tickers, fin)
    if not fin.empty:
        latest = fin.join(ratios[[c for c in ratios.columns if c not in fin.columns]])
        latest = latest.groupby(level="ticker", observed=True).tail(1)
        # a statement far older than the price window is no "latest" for it: say so instead of mixing eras
        cutoff = pd.Timestamp(args.end_date) - pd.DateOffset(months=18)
        old = latest.index.get_level_values("report_period") < cutoff
        for ticker, period_end in latest.index[old]:
            print(
                f"  (the latest annual statement of {ticker} in this service's data is for {period_end:%Y-%m-%d}, "
                f"older than the price window: not shown)"
            )
        latest = latest[~old]
        money = {"revenue": "revenue_bn", "net_income": "net_income_bn"}
        table = latest[[c for c in money if c in latest.columns]].div(1e9).rename(columns=money)
        table = table.round(1)
        for c in ("gross_margin", "net_margin", "return_on_equity", "price_to_earnings_ratio"):
            if c in latest.columns:
                table[c] = latest[c].round(3)
        with pd.option_context("display.width", 120, "display.max_columns", 8):
            print(table)
    parquet = out / "prices.parquet"
    prices.to_parquet(parquet)
    back = pd.read_parquet(parquet)
    if not back.equals(prices):
        raise RuntimeError("the Parquet round trip changed the price frame")
    total = prices.fds.total_return()  # dividends put back: performance is total return
    # the legend lists the tickers as the title does (the order asked for)
    ax = total.fds.plot(
        column="tr_close", rebase=100, order=tickers, title=f"{', '.join(tickers)}: total return, dividends reinvested"
    )
    png = out / "performance.png"
    figure = ax.get_figure(root=True)
    if figure is None:  # pragma: no cover - .fds.plot always draws on a figure
        raise RuntimeError("the performance plot has no figure")
    figure.savefig(png, dpi=110, bbox_inches="tight")
    print()
    print(f"saved {parquet} ({parquet.stat().st_size / 1e3:.0f} kB, dtypes kept) and {png}")
    return 0


def _say_missing(what: str, tickers: list[str], frame) -> None:
    """Say which tickers a table lacks, instead of dropping them silently."""
    have = set(frame.index.get_level_values("ticker")) if len(frame) else set()
    missing = [t for t in tickers if t not in have]
    if missing:
        print(f"  (no {what} for {', '.join(missing)} in this service's data)")


def _get(args: argparse.Namespace) -> int:
    """``fdkit get DATASET ...``: one dataset as a table, CSV or Parquet file."""
    import json

    import pandas as pd

    import fdkit
    from fdkit.catalog.endpoints import get as get_endpoint

    ep = get_endpoint(args.dataset)
    params: dict[str, Any] = {}
    for p in ep.params:
        value = getattr(args, p.name, None)
        if value is None or value == []:
            continue
        if p.name == "limit" and value == "all":
            params["limit"] = None
            continue
        if p.type == "array" and p.items == "filter":
            try:
                value = json.loads(value)
            except json.JSONDecodeError as exc:
                raise _UsageError(
                    f"--{p.name} is not valid JSON ({exc.msg} at column {exc.colno}): {value!r}; write it as "
                    '\'[{"field": "revenue", "operator": "gt", "value": 1e11}]\''
                ) from None
        params[p.name] = value
    positional = getattr(args, "positional_tickers", None)
    if positional and ep.ticker_param:
        params[ep.ticker_param] = positional if len(positional) > 1 else positional[0]
    out = args.output
    if out is not None and out != "-":
        _check_output(out)  # before anything is fetched: a bad path is a usage error, not a traceback at the end
    fiscal_period = getattr(args, "fiscal_period", None)
    if fiscal_period is not None:
        df = _screen_one_fiscal_period(params, fiscal_period)
    else:
        df = getattr(fdkit, ep.name)(**params, errors=args.errors)
        if ep.name == "screen":
            _say_period_mix(df, params.get("period") or "ttm")
    if out is None:
        with pd.option_context("display.width", 160, "display.max_columns", 12, "display.max_rows", 40):
            print(df)
    elif out == "-":
        df.to_csv(sys.stdout)
    else:
        try:
            df.to_parquet(out) if out.endswith(".parquet") else df.to_csv(out)
        except OSError as exc:
            raise _UsageError(f"cannot write {out}: {exc.strerror or exc}") from None
        print(f"wrote {len(df):,} rows to {out}", file=sys.stderr)
    return 0


def _screen_one_fiscal_period(params: dict[str, Any], fiscal_period: str) -> Any:
    """``fdkit get screen --fiscal-period FY2016``: every company's statements of one fiscal period, screened.

    The service's screener compares each company's latest period; this is Python's
    ``fdkit.financials(fdkit.available("balance_sheets"), period=..., limit=None).fds.screen(filters,
    fiscal_period=...)``, with the columns the screener answers (and ``fiscal_period``).
    """
    import fdkit

    period = params.get("period") or "ttm"
    known_by = {"as_of": params["filing_date_lte"]} if params.get("filing_date_lte") else {}
    every = fdkit.financials(
        fdkit.available("balance_sheets"), period=period, limit=None, errors="ignore", progress=False, **known_by
    )
    filters = list(params.get("filters") or [])
    if params.get("currency"):
        filters.append({"field": "currency", "operator": "eq", "value": params["currency"]})
    out = every.fds.screen(filters, fiscal_period=fiscal_period)
    fields = ["period", "fiscal_period", "currency", "filing_date"] + [f.get("field") for f in filters]
    out = out[list(dict.fromkeys(c for c in fields if c in out.columns))]
    limit = params.get("limit")
    return out.head(limit) if isinstance(limit, int) else out


def _say_period_mix(df: Any, period: str) -> None:
    """One line on stderr when a screen's rows (each company's latest report) end in different years."""
    from fdkit.research.plot import fiscal_periods_text

    if not len(df) or "report_period" not in df.index.names:
        return
    ends = df.index.get_level_values("report_period")
    labels = [f"{d.year}-Q{d.quarter}" if period == "quarterly" else str(d.year) for d in ends]
    counts = {k: labels.count(k) for k in sorted(set(labels))}
    if len(counts) > 1:
        print(
            f"fdkit: note: each row is its company's latest {period} report, and their periods end in "
            f"{fiscal_periods_text(counts)}: to compare one fiscal year pass --fiscal-period FY2016 (Python: "
            f".fds.screen(..., fiscal_period='FY2016'))",
            file=sys.stderr,
        )


def _check_output(out: str) -> None:
    """Refuse an output path that cannot be written: a wrong suffix, a folder that does not exist, a folder."""
    from pathlib import Path

    if not out.endswith((".parquet", ".csv")):
        raise _UsageError(f"-o must end in .parquet or .csv, or be '-' for CSV on stdout; got {out!r}")
    path = Path(out).expanduser()
    folder = path.parent
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise _UsageError(f"cannot write {out}: the folder {str(folder)!r} {what} (create it first)")
    if path.is_dir():
        raise _UsageError(f"cannot write {out}: it is a folder")
    if not os.access(folder, os.W_OK):
        raise _UsageError(f"cannot write {out}: the folder {str(folder)!r} is not writable")


def _mirror(args: argparse.Namespace) -> int:
    """``fdkit mirror``: copy datasets into a lake of Delta tables (resumable)."""
    from fdkit.mirror import mirror

    report = mirror(
        args.tickers,
        args.datasets,
        args.out,
        start_date=args.start_date,
        end_date=args.end_date,
        force=args.force,
        progress=None,
    )
    for (name, ticker), msg in sorted(report.failed.items()):
        print(f"failed {name} {ticker}: {msg}", file=sys.stderr)
    rows = ", ".join(f"{k} {v:,}" for k, v in sorted(report.rows.items())) or "nothing new"
    print(
        f"mirrored {len(report.done)} (dataset, ticker) pairs into {args.out} ({rows}); "
        f"{len(report.skipped)} already there; {len(report.failed)} failed"
    )
    return 0 if not report.failed or report.done else 1


def _listen(args: argparse.Namespace) -> int:
    """``fdkit webhooks listen``: run the receiver, with ``fdkit serve``'s protocol (its header-read timeout)."""
    import uvicorn

    from fdkit.server.protocol import HTTP_PROTOCOL
    from fdkit.webhooks import create_receiver
    from fdkit.webhooks.receiver import BODY_TIMEOUT

    secret = args.secret or os.environ.get("FDKIT_WEBHOOK_SECRET")
    if not secret:
        raise _UsageError("give --secret or set FDKIT_WEBHOOK_SECRET")
    if args.max_body_bytes < 1 or (args.body_timeout is not None and args.body_timeout <= 0):
        raise _UsageError("--max-body-bytes and --body-timeout must be positive")
    app = create_receiver(
        args.lake,
        secret,
        tolerance=args.tolerance,
        max_body_bytes=args.max_body_bytes,
        body_timeout=BODY_TIMEOUT if args.body_timeout is None else args.body_timeout,
    )
    print(f"fdkit webhooks: landing events in {args.lake} on http://{args.host}:{args.port}/", file=sys.stderr)
    # as `fdkit serve`: a connection that sends no whole request head within FDKIT_HEADER_TIMEOUT seconds is
    # closed, an idle keep-alive one after 5 s; the body has --body-timeout seconds (the app answers 408)
    uvicorn.run(
        app,
        host=args.host,
        port=args.port,
        log_level="warning",
        access_log=False,
        http=HTTP_PROTOCOL,
        timeout_keep_alive=5,
        backlog=2048,
    )
    return 0


def _replay(args: argparse.Namespace) -> int:
    """``fdkit events replay``: emit what the live service would have, to the configured destinations."""
    import time

    from fdkit.lake.io import default_data_dir, require_lake
    from fdkit.webhooks import deliver, events_from_lake, load_destinations

    dests = _destinations(load_destinations, args.destinations)
    data = args.data or default_data_dir()
    require_lake(data)
    events = events_from_lake(
        data, since=args.since, until=args.until, livemode=not args.test, base_url=_public_url(args)
    )
    total = sum(1 for d in dests for e in events if d.wants(e["type"]))
    last = [time.monotonic()]

    def progress(report, done: int) -> None:
        now = time.monotonic()
        if now - last[0] >= 2.0 or done == total:
            last[0] = now
            print(
                f"fdkit events: {done}/{total} deliveries finished ({len(report.acked)} acknowledged, "
                f"{len(report.failed)} failed)",
                file=sys.stderr,
            )

    report = deliver(events, dests, log=args.log, deadline=args.deadline, progress=progress)
    print(
        f"replayed {len(events)} events to {len(dests)} destination(s): {len(report.acked)} acknowledged, "
        f"{len(report.failed)} failed, {sum(report.attempts.values())} attempts"
    )
    if report.failed:
        first = next(iter(report.failed.values()))
        print(f"fdkit events: {len(report.failed)} event(s) not delivered; first: {first}", file=sys.stderr)
    return 0 if not report.failed else 1


def _public_url(args: argparse.Namespace) -> str:
    """The base URL events point at (``filing_items`` URLs): --public-url, else FDKIT_PUBLIC_URL, else loopback."""
    url = args.public_url or os.environ.get("FDKIT_PUBLIC_URL") or "http://127.0.0.1:8000"
    if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).netloc:
        raise _UsageError(f"--public-url must be an http(s) URL such as https://fds.example.com, not {url!r}")
    return url.rstrip("/")


def _public_url_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--public-url",
        help="base URL of the service the events' URLs point at (default "
        "$FDKIT_PUBLIC_URL, else http://127.0.0.1:8000)",
    )


def _destinations(load, path: str):
    """Read a destinations file; a missing or malformed one is a usage error (one line, exit 2)."""
    try:
        return load(path)
    except OSError as exc:
        raise _UsageError(f"cannot read the destinations file {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise _UsageError(f"bad destinations file {path}: {exc}") from None


def _test_events(args: argparse.Namespace) -> int:
    """``fdkit events test``: one test event (``livemode: false``) of each type, or of ``--type``, on demand.

    The newest event of each type the lake gives; a spec-shaped example for a type the lake cannot trigger.
    """
    from fdkit.lake.io import default_data_dir
    from fdkit.webhooks import EVENT_TYPES, deliver, load_destinations
    from fdkit.webhooks.events import example_payload, make_event
    from fdkit.webhooks.generate import latest_events

    if args.type is not None and args.type not in EVENT_TYPES:
        raise _UsageError(f"unknown event type {args.type!r}; one of: {', '.join(EVENT_TYPES)}")
    dests = _destinations(load_destinations, args.destinations)
    wanted = [args.type] if args.type else list(EVENT_TYPES)
    # the newest event of each type from the lake's latest rows only: a test never generates the whole lake
    latest = latest_events(args.data or default_data_dir(), wanted, livemode=False, base_url=_public_url(args))
    examples = [t for t in wanted if t not in latest]
    for t in examples:
        family = t.removesuffix(".created")
        latest[t] = make_event(family, example_payload(family), livemode=False)
    report = deliver([latest[t] for t in wanted], dests, log=args.log)
    missing = ", ".join(examples) or "none"
    print(
        f"sent {len(latest)} test event(s) ({len(examples)} from examples: the lake has no data for {missing}): "
        f"{len(report.acked)} acknowledged, {len(report.failed)} failed"
    )
    return 0 if not report.failed else 1


def _cache(args: argparse.Namespace) -> int:
    from fdkit.client.cache import cache_info, clear_cache

    if args.action == "info":
        rows = cache_info(args.cache_dir)
        if not rows:
            print("no cache files")
        for r in rows:
            print(f"{r['namespace']}  {r['responses']:>7} responses  {r['bytes'] / 1e6:8.2f} MB  {r['path']}")
    else:
        print(f"removed {clear_cache(args.cache_dir)} file(s)")
    return 0


def _lake(args: argparse.Namespace) -> int:
    """``fdkit lake validate DIR``: one line per invariant; exit 1 on any violation."""
    from fdkit.lake.io import default_data_dir
    from fdkit.lake.validate import INVARIANTS, format_report, validate

    root = args.dir or default_data_dir()
    _require_lake_folder(root, "fdkit lake validate", "; without DIR it checks the bundled lake")
    only = args.only or None
    if only:
        unknown = [n for n in only if n not in INVARIANTS]
        if unknown:
            raise _UsageError(f"unknown invariant {unknown[0]!r}; {suggest(unknown[0], list(INVARIANTS))}")
    results = validate(root, only=only)
    print(format_report(results, examples=args.examples))
    failed = [r for r in results if r.violations]
    checked = [r for r in results if r.violations is not None]
    unchecked = [r for r in results if r.error]
    print(
        f"{len(checked)} invariants checked, {len(failed)} failed, {len(unchecked)} not checked (errors above), "
        f"{len(results) - len(checked) - len(unchecked)} skipped (datasets absent) in {root}"
    )
    return 1 if failed or unchecked else 0


def _require_lake_folder(root: str | os.PathLike[str], command: str, otherwise: str = "") -> None:
    """``require_lake`` for a command that takes the lake as its DIR argument: the hint names DIR, not --data."""
    from fdkit.errors import LakeError
    from fdkit.lake.io import require_lake

    try:
        require_lake(root)
    except LakeError as exc:
        said = re.sub(r" \(set FDKIT_DATA or pass --data[^)]*\)$", "", str(exc))
        raise _UsageError(
            f"{said} (give {command} a lake folder, such as one 'fdkit mirror --out DIR' wrote{otherwise})"
        ) from None


def _maintain(args: argparse.Namespace) -> int:
    """``fdkit lake convert|optimize|vacuum DIR``: one line per dataset."""
    from fdkit.lake.tables import convert_lake, optimize_lake, vacuum_lake

    _require_lake_folder(args.dir, f"fdkit lake {args.action}")
    if args.action == "convert":
        lines = convert_lake(args.dir, args.dataset)
    elif args.action == "optimize":
        lines = optimize_lake(args.dir, args.dataset)
    else:
        lines = vacuum_lake(args.dir, retain_hours=args.retain_hours, dry_run=args.dry_run, names=args.dataset)
    for line in lines:
        print(line)
    return 0


class _UsageError(Exception):
    """A bad command line: one line on stderr, exit code 2."""


class _Parser(argparse.ArgumentParser):
    """An argparse parser whose errors are one clear line (and exit code 2)."""

    def error(self, message: str) -> NoReturn:
        match = re.match(r"argument (.+?): invalid choice: '(.*)' \(choose from (.*)\)$", message)
        if match:  # argparse lists every choice in declaration order; put the closest first
            choices = re.findall(r"'([^']*)'", match.group(3)) or [c.strip() for c in match.group(3).split(",")]
            message = (
                f"argument {match.group(1)}: invalid choice {match.group(2)!r}; {suggest(match.group(2), choices)}"
            )
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _port(text: str) -> int:
    """An argparse type: a TCP port number (0 = any free port)."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port {port} is out of range (0-65535)")
    return port


def _date(text: str) -> str:
    """An argparse type: a calendar date ``YYYY-MM-DD``."""
    import datetime as _dt

    try:
        return _dt.date.fromisoformat(text).isoformat()
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {text!r}") from None


_PY_TYPES = {"integer": int, "number": float, "string": str, "date": _date}


def _limit(text: str) -> int | str:
    """``--limit``: a number of records, or ``all`` (``limit=None`` in Python: everything)."""
    if text.strip().lower() == "all":
        return "all"
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a number of records or 'all', not {text!r}") from None


def _default_note(ep: Any, param: Any) -> str:
    """What a ``fdkit get`` option means when left out: fdkit's default, the service's, or that it is required.

    Example:
        >>> from fdkit.catalog import get
        >>> ep = get("prices")
        >>> notes = [_default_note(ep, p) for p in ep.params if p.name in ("interval", "label", "start_date", "limit")]
        >>> notes[:3]
        [' (default: day)', " (default: start, the service's)", ' (required)']
        >>> notes[3]
        ' (default: every bar of the date range)'
    """
    if param.name == "limit":
        if ep.finite_default is not None:
            return f" (default: {ep.finite_default})"
        if ep.time_index is not None:
            return " (default: every bar of the date range)"
        if ep.kind == "search" and "tickers" in ep.param_names and param.default is not None:
            return f" (default: {param.default} per ticker)"
    if param.client_default is True:
        return " (default: on)"
    if param.client_default is not None:
        return f" (default: {param.client_default})"
    if param.required and param.name != ep.ticker_param:
        return " (required)"
    if param.default is not None and param.default is not False:
        return f" (default: {param.default}, the service's)"
    return ""


def _add_dataset_parser(sub: argparse._SubParsersAction, ep) -> None:
    p = sub.add_parser(ep.name, help=ep.summary, description=f"{ep.summary} ({ep.method} {ep.path})")
    if ep.ticker_param:
        p.add_argument(
            "positional_tickers",
            nargs="*",
            metavar=ep.ticker_param.upper(),
            help=f"{ep.ticker_param}(s); several are fetched concurrently",
        )
    for param in ep.params:
        flag = "--" + param.name.replace("_", "-")
        kw: dict = {"dest": param.name, "help": (param.description or param.type) + _default_note(ep, param)}
        if param.type == "boolean":
            # --no-X too where fdkit's own default is on: a flag that cannot be turned off hides a choice
            kw["action"] = argparse.BooleanOptionalAction if param.client_default else "store_true"
            kw["default"] = None
        elif param.type == "array":
            if param.items == "filter":
                kw["help"] = 'JSON, e.g. \'[{"field": "revenue", "operator": "gt", "value": 1e11}]\''
            else:
                kw["nargs"] = "+"
        else:
            kw["type"] = _limit if param.name == "limit" else _PY_TYPES[param.type]
            if param.name == "limit":
                kw["help"] = (param.description or "").rstrip(".") + "; 'all' for every record (limit=None in "
                kw["help"] += "Python)" + _default_note(ep, param)
            if param.enum:
                kw["choices"] = list(param.enum)
            if param.repeatable or param.name == ep.ticker_param:
                kw["nargs"] = "+"
        p.add_argument(flag, **kw)
    if ep.name == "screen":
        p.add_argument(
            "--fiscal-period",
            metavar="PERIOD",
            help="compare one fiscal period, e.g. FY2016 or 'Q3 2024' (Python: .fds.screen(fiscal_period="
            "...)): every company's statements of that period are screened on statement fields, every "
            "match kept unless --limit N; default: the service's screener, each company's latest "
            "period (a mix of years is said on stderr)",
        )
    p.add_argument("-o", "--output", help="file.parquet, file.csv, or - for CSV on stdout (default: print)")
    p.add_argument(
        "--errors",
        choices=["raise", "warn", "ignore"],
        default="raise",
        help="what to do when one of several tickers fails: raise (the default, rc 1), warn and "
        "write the others, ignore",
    )
    p.set_defaults(func=_get, dataset=ep.name)


def _tickers(args: argparse.Namespace) -> int:
    """``fdkit tickers DATASET``: the tickers the service has for a dataset, one a line."""
    import fdkit

    names = fdkit.available(args.dataset, "tickers")
    if args.like:
        names = [n for n in names if args.like.upper() in str(n).upper()]
    print("\n".join(str(n) for n in names))
    return 0


def _no_prices(tickers: list[str], start: str, end: str) -> Exception:
    """The demo's error when no ticker has a bar in its window: exit code 1, naming how to list the tickers."""
    from fdkit.errors import NotFoundError

    none = NotFoundError(
        f"no prices for {', '.join(tickers)} between {start} and {end} in this service's data "
        "(--start-date and --end-date choose the window)"
    )
    none.next_step = "fdkit.available('prices') lists the tickers it has"  # (main() says it in the CLI's words)
    return none


def _add_tickers_parser(sub: Any) -> None:
    """The ``fdkit tickers`` subcommand: ``fdkit.available(DATASET)`` on the command line."""
    from fdkit.catalog.endpoints import CATALOG, tickers_listed_by

    # every dataset whose tickers a listing names (income_statements as well as balance_sheets, whose listing it is)
    listed = sorted({ep.name for ep in CATALOG.values() if ep.kind != "listing" and tickers_listed_by(ep.path)})
    t = sub.add_parser(
        "tickers",
        help="list the tickers the service has for a dataset",
        description="Print the tickers the configured service has for a dataset, one a line (Python: "
        "fdkit.available(DATASET)). Example: fdkit tickers prices --like BRK",
    )
    t.add_argument("dataset", choices=listed, metavar="DATASET", help=f"any of: {', '.join(listed)}")
    t.add_argument("--like", help="only the tickers containing this text, any case (default: every ticker)")
    t.set_defaults(func=_tickers)


def _add_mirror_parser(sub: Any) -> None:
    """The ``fdkit mirror`` subcommand's arguments."""
    from fdkit.mirror import MIRRORABLE

    m = sub.add_parser(
        "mirror",
        help="copy datasets into a lake of Delta tables (resumable)",
        description="Download datasets from the configured service into a lake that "
        "'fdkit serve --data LAKE' answers from.",
    )
    m.add_argument(
        "--tickers",
        nargs="+",
        required=True,
        metavar="TICKER",
        help="the tickers to download, separated by spaces (AAPL MSFT); each dataset is fetched for "
        "each ticker, a ticker the service lacks is reported and the others go on",
    )
    m.add_argument(
        "--datasets",
        nargs="+",
        required=True,
        choices=sorted(MIRRORABLE),
        metavar="DATASET",
        help=f"any of: {', '.join(sorted(MIRRORABLE))} (price_history: from a service that has "
        "it, e.g. the embedded default with fdkit-history installed)",
    )
    m.add_argument("--out", required=True, help="lake directory")
    m.add_argument(
        "--start-date",
        type=_date,
        default="1990-01-01",
        help="first day of prices, crypto_prices and price_history (default 1990-01-01)",
    )
    m.add_argument(
        "--end-date",
        type=_date,
        default=None,
        help="last day of prices, crypto_prices and price_history (default today)",
    )
    m.add_argument("--force", action="store_true", help="refetch pairs the lake already has")
    m.set_defaults(func=_mirror)


def _add_serve_parser(sub: Any) -> None:
    """The ``fdkit serve`` subcommand's arguments."""
    s = sub.add_parser(
        "serve",
        help="serve the Financial Data Service over a Parquet lake",
        description="Serve the Financial Data Service API over a Parquet lake.",
    )
    s.add_argument(
        "--data",
        help="lake directory or s3://bucket/prefix URL (endpoint, credentials and region from "
        "the AWS environment variables; default: FDKIT_DATA, else the bundled reference data)",
    )
    s.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1)")
    s.add_argument("--port", type=_port, default=8000, help="TCP port, 1-65535, or 0 for any free port (default 8000)")
    s.add_argument("--keys", help="keys file: one key per line, optionally followed by a plan (pro|free)")
    s.add_argument(
        "--log-level",
        default="warning",
        choices=["debug", "info", "warning", "error"],
        help="the server's log level (default warning)",
    )
    s.add_argument(
        "--public-url",
        help="base URL clients reach the service at (default http://HOST:PORT); "
        "next_page_url links are built on it, never on a request's Host header",
    )
    s.add_argument(
        "--cursor-secret",
        help="HMAC key of the pagination cursors, >= 32 characters, shared by workers "
        "and restarts (or FDKIT_CURSOR_SECRET; default: random per process)",
    )
    s.add_argument("--allow-short-keys", action="store_true", help="accept keys shorter than 16 characters")
    s.add_argument(
        "--workers",
        type=int,
        default=1,
        help="worker processes sharing the port (default 1; each reads the lake and keeps its own memo)",
    )
    s.add_argument(
        "--memory",
        default=os.environ.get("FDKIT_SERVER_MEMORY") or "1GB",
        help="lake data kept in memory per process, e.g. 512MB or 4GB (default 1GB, or "
        "FDKIT_SERVER_MEMORY); the least recently used is dropped first",
    )
    s.add_argument(
        "--contract",
        choices=CONTRACTS,
        default=os.environ.get("FDKIT_CONTRACT") or DEFAULT_CONTRACT,
        help=f"the API contract served (default {DEFAULT_CONTRACT}, or FDKIT_CONTRACT): seed (every endpoint needs "
        "a key, the seed's page sizes and vocabularies) or 2026 (the 2026 document's); docs/CONTRACTS.md lists "
        "every difference",
    )
    s.set_defaults(func=_serve)


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser of the ``fdkit`` command.

    Returns:
        The parser.

    Example:
        >>> build_parser().parse_args(["serve", "--port", "0"]).port
        0
    """
    from fdkit.catalog.endpoints import CATALOG

    p = _Parser(prog="fdkit", description="Financial data as typed pandas frames.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)

    g = sub.add_parser(
        "get",
        help="fetch one dataset: print it or save it as Parquet/CSV",
        description="Fetch one dataset with the service's parameter names (dashes for underscores)."
        " Example: fdkit get prices AAPL --start-date 2024-01-02 --end-date 2024-03-28 -o p.parquet",
    )
    gsub = g.add_subparsers(dest="dataset_name", required=True, metavar="DATASET", parser_class=_Parser)
    for ep in CATALOG.values():
        if ep.kind != "listing":
            _add_dataset_parser(gsub, ep)

    _add_mirror_parser(sub)
    _add_serve_parser(sub)
    _add_tickers_parser(sub)

    d = sub.add_parser(
        "demo",
        help="the main job: a price panel, statements, ratios, a Parquet file and a plot",
        description="Fetch a price panel and statements (embedded service by default), print "
        "tables, save a Parquet file and a performance plot.",
    )
    d.add_argument(
        "--tickers",
        nargs="+",
        default=["AAPL", "MSFT", "NVDA", "GOOGL"],
        metavar="TICKER",
        help="the panel's tickers (default: AAPL MSFT NVDA GOOGL)",
    )
    # the latest two years of as-traded bars (the S&P 500 source's last session is 2026-03-13)
    d.add_argument("--start-date", type=_date, default="2024-03-13", help="first day (default 2024-03-13)")
    d.add_argument(
        "--end-date",
        type=_date,
        default="2026-03-13",
        help="last day (default 2026-03-13, the bundled bars' last session)",
    )
    d.add_argument("--out", default="out", help="output folder (default ./out)")
    d.set_defaults(func=_demo)

    w = sub.add_parser("webhooks", help="webhook receiver")
    wsub = w.add_subparsers(dest="webhooks_command", required=True, metavar="COMMAND", parser_class=_Parser)
    li = wsub.add_parser("listen", help="receive signed events and land them in a lake exactly once")
    li.add_argument("--port", type=_port, default=8080, help="TCP port (default 8080)")
    li.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1, this machine only)")
    li.add_argument("--secret", help="signing secret (or FDKIT_WEBHOOK_SECRET)")
    li.add_argument("--lake", required=True, help="lake directory events land in")
    li.add_argument("--tolerance", type=int, default=300, help="max signature age in seconds (default 300)")
    li.add_argument(
        "--max-body-bytes",
        type=int,
        default=4 * 2**20,
        help="largest delivery accepted, in bytes (413 beyond; default 4 MiB)",
    )
    li.add_argument(
        "--body-timeout",
        type=float,
        default=None,
        help="seconds a delivery's body may take after its headers (408 beyond; default "
        "FDKIT_BODY_TIMEOUT or 10); headers have FDKIT_HEADER_TIMEOUT seconds (10)",
    )
    li.set_defaults(func=_listen)

    e = sub.add_parser("events", help="webhook events from the lake")
    esub = e.add_subparsers(dest="events_command", required=True, metavar="COMMAND", parser_class=_Parser)
    rp = esub.add_parser("replay", help="walk the lake in filing-date order and deliver the events")
    rp.add_argument("--since", type=_date, help="first date (YYYY-MM-DD)")
    rp.add_argument("--until", type=_date, help="last date (YYYY-MM-DD)")
    rp.add_argument("--data", help="lake (default: the bundled reference data)")
    rp.add_argument("--destinations", required=True, help="JSON file: [{url, secret, api_version, types}]")
    _public_url_option(rp)
    rp.add_argument("--log", help="delivery log (JSON lines)")
    rp.add_argument("--test", action="store_true", help="send test events (livemode false)")
    rp.add_argument(
        "--deadline",
        type=float,
        default=300.0,
        help="seconds the whole replay may take before undelivered events are given up (default 300)",
    )
    rp.set_defaults(func=_replay)
    te = esub.add_parser("test", help="send one test event (livemode false) of each type, or of --type")
    te.add_argument("--type", help="only this event type, e.g. income_statements.created")
    te.add_argument("--data", help="lake (default: the bundled reference data)")
    te.add_argument("--destinations", required=True, help="JSON file: [{url, secret, api_version, types}]")
    _public_url_option(te)
    te.add_argument("--log", help="delivery log (JSON lines)")
    te.set_defaults(func=_test_events)

    lk = sub.add_parser("lake", help="check or maintain a lake", description="Check or maintain a lake.")
    lsub = lk.add_subparsers(dest="action", required=True, parser_class=_Parser)
    lv = lsub.add_parser(
        "validate",
        help="run the data invariants (exit 1 on any violation)",
        description="Run the data invariants of fdkit.lake.validate on a lake: one line per invariant "
        "with its violation count; exit 1 on any violation.",
    )
    lv.add_argument("dir", nargs="?", help="lake directory (default: the bundled reference data)")
    lv.add_argument("--only", nargs="+", metavar="INVARIANT", help="run only these invariants")
    lv.add_argument("--examples", action="store_true", help="print the first violating rows of each failure")
    lv.set_defaults(func=_lake)
    helps = {
        "convert": "make plain Parquet datasets Delta tables (in place where the files allow, else rewritten)",
        "optimize": "compact Delta tables into large files sorted by ticker (old files stay until vacuum)",
        "vacuum": "delete files no version within the retention needs (default 7 days)",
    }
    for action, text in helps.items():
        lm = lsub.add_parser(action, help=text, description=text[0].upper() + text[1:] + ".")
        lm.add_argument("dir", help="lake directory")
        lm.add_argument("--dataset", nargs="+", metavar="NAME", help="only these datasets")
        if action == "vacuum":
            lm.add_argument(
                "--retain-hours",
                type=float,
                metavar="H",
                help="keep the files versions of the last H hours read (0: only the current version)",
            )
            lm.add_argument("--dry-run", action="store_true", help="only list what would be deleted")
        lm.set_defaults(func=_maintain)
    c = sub.add_parser("cache", help="inspect or clear the on-disk HTTP cache")
    csub = c.add_subparsers(dest="action", required=True, metavar="ACTION", parser_class=_Parser)
    for action, about in (
        ("info", "one line per cache file: its namespace, answers, size and path"),
        ("clear", "remove every cache file (the next calls fetch again)"),
    ):
        ca = csub.add_parser(action, help=about, description=about[0].upper() + about[1:] + ".")
        ca.add_argument("--cache-dir", help="cache directory (default: $FDKIT_CACHE_DIR or the user cache dir)")
        ca.set_defaults(func=_cache)
    return p


def _in_cli_words(text: str) -> str:
    """A message's next step as the command line spells it: ``fdkit.available('X')`` is ``fdkit tickers X``.

    Example:
        >>> _in_cli_words("Ticker NOPEX not found; fdkit.available('prices') lists the tickers it has")
        "Ticker NOPEX not found; 'fdkit tickers prices' lists the tickers it has"
    """
    return re.sub(r"fdkit\.available\('(\w+)'\) lists", r"'fdkit tickers \1' lists", text)


def _one_line_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """A warning as the command line says it: ``fdkit: warning: <message>`` on stderr, one line, no source frame."""
    from fdkit.errors import redact

    text = _in_cli_words(" ".join(str(message).split()))  # (a skipped ticker's reason names the Python call)
    if category.__module__.split(".")[0] != "fdkit":
        text = f"{category.__name__}: {text}"  # another library's: its class says whose
    print(f"fdkit: warning: {redact(text)}", file=file or sys.stderr)


#: the line the embedded service prints when it starts (fdkit/client/embedded.py): held back until the command's
#: next line on stderr, and left out before an error (which says which service answered instead)
_EMBEDDED_BANNER = "fdkit: no API key or base URL configured; using the embedded"


class _HeldBanner(io.TextIOBase):
    """stderr, with the embedded service's start line held back until something else is written.

    A command that goes on prints it where it was (before its warnings, progress bars and results); a command
    that fails prints its one error line alone (:meth:`drop`).

    Example:
        >>> out = io.StringIO()
        >>> err = _HeldBanner(out)
        >>> print(_EMBEDDED_BANNER + " service", file=err)
        >>> out.getvalue(), err.drop()
        ('', True)
    """

    def __init__(self, real: TextIO) -> None:
        self.real, self.held = real, ""

    def write(self, s: str) -> int:
        if self.held and not self.held.endswith("\n"):  # print() writes the line, then its end
            self.held += s
        elif s.startswith(_EMBEDDED_BANNER):
            self.held = s
        else:
            self.release()
            self.real.write(s)
        return len(s)

    def flush(self) -> None:
        self.real.flush()

    def isatty(self) -> bool:
        return self.real.isatty()

    def fileno(self) -> int:
        return self.real.fileno()

    def release(self) -> None:
        """Print the held line, if any."""
        if self.held:
            self.real.write(self.held)
            self.held = ""

    def drop(self) -> bool:
        """Forget the held line; whether there was one."""
        held, self.held = bool(self.held), ""
        return held


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line.

    Args:
        argv: arguments (default ``sys.argv[1:]``).

    Returns:
        The exit code.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    from fdkit.errors import BadRequestError, FdkitError, LakeError, redact

    real, held = sys.stderr, _HeldBanner(sys.stderr)
    embedded = ""
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _one_line_warning  # a terminal reads fdkit's words, not a Python frame
            sys.stderr = held  # the embedded service's start line, see _HeldBanner
            try:
                code = int(args.func(args) or 0)
                held.release()
                return code
            except BaseException:
                embedded = " [answered by the embedded service over the bundled reference data]" if held.drop() else ""
                raise
            finally:
                sys.stderr = real
    except (_UsageError, BadRequestError, LakeError) as exc:
        print(f"fdkit: error: {redact(str(exc))}{embedded}", file=sys.stderr)
        return 2
    except FdkitError as exc:
        print(f"fdkit: {_in_cli_words(str(exc))}{embedded}", file=sys.stderr)
        return 1
    except (FileNotFoundError, PermissionError, IsADirectoryError, NotADirectoryError) as exc:
        print(f"fdkit: error: {exc.strerror or exc}: {exc.filename}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
