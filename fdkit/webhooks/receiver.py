"""The webhook receiver: verify, deduplicate, land records in a lake exactly once, then acknowledge.

Order of work per delivery: check the signature header (401 when missing, forged or stale) -> read the body
(413 past ``max_body_bytes``, 408 when it takes longer than ``body_timeout`` after the headers) -> in a worker
thread: verify the signature, parse and validate the envelope (400 for bad JSON, an unknown type or missing fields;
nothing written) -> take the locks of the datasets the event writes (:mod:`fdkit.lake.locks`; ``fdkit mirror`` and
every other fdkit writer hold them too) -> if the event id was already landed, answer 200 ``duplicate`` -> check
every record against its landing rule (below; 413 when the event would land more than ``max_event_files`` files)
-> commit the event's records as Parquet files to each dataset's Delta table through
:class:`fdkit.lake.writer.LakeWriter` (files atomic: temp file, fsync, rename; then one log commit) -> record the
event id and the key of every row it made live in the ledger (:class:`fdkit.lake.ledger.Ledger`, SQLite,
committed) -> release the locks -> answer 200. A crash between the commit and the ledger only means the sender
retries; the files are named by the records' identity, so rewriting them changes nothing. The ledger's rows are what
``fdkit mirror`` never replaces (landed events win) and what ``fdkit lake validate`` finds again
(``landed_events_in_lake``). Events of different datasets land at the same time; events of one dataset one after
the other. ``fdkit webhooks listen`` runs on ``fdkit serve``'s HTTP protocol: a connection that sends no whole
request head within ``FDKIT_HEADER_TIMEOUT`` seconds (10) is closed.

A key field the spec lets be null (a release's ``report_period``, a filing's ``filing_date``:
:attr:`LandingRule.nullable`) is not required: the record lands, its file named by its key fields and a digest of
its own fields (a redelivery lands on the same file, another record never replaces it).

A *poison* event is refused whole: 400 ``{"error", "message"}`` naming the problem, nothing of it written, the
event kept in ``_webhooks/dead-letter.jsonl`` with why (a 400 tells the sender not to retry). An event is poison
when a record does not fit its schema, lacks a field the rule requires (:attr:`LandingRule.required`: the
partition column and the fields that identify a record in the lake, e.g. ticker, report period and period of a
statement), or names another partition than its envelope (a record's ``ticker`` or ``bank`` differing from
``data.object``'s).

Where records land (``<lake>/<dataset>/<partition>/<key>.parquet``, readable by ``fdkit serve --data`` and by
plain ``pd.read_parquet(<lake>/<dataset>)``: a ``key=value/`` folder's column is typed in each file as pandas' reader
types the folder, :func:`readable_by_folder`; a plain read also sees the files a later filing replaced until
``fdkit lake vacuum`` removes them, a read of the table's log only the live ones); the **matching key** decides
what an amendment replaces. :data:`LANDING` is this table as data, one
:class:`LandingRule` per event family:

=====================================  ==================================  ======================================
event family                           dataset, partition                  key (one file per key)
=====================================  ==================================  ======================================
income/balance/cash-flow/metrics       same name, ``ticker=``              report period + period; a later filing
                                                                           (or an amendment of the same day)
                                                                           replaces the entry, an older one that
                                                                           arrives late is ignored
insider trades / ownership             same name, ``ticker=``              accession, form, filing date; an
                                                                           amendment (``4/A``) replaces the latest
                                                                           earlier filing of the same insider
                                                                           (``name``) of that form or its
                                                                           amendments, whatever the arrival order
                                                                           (replaced files are parked in
                                                                           ``_webhooks/amended/``)
segments                               ``segmented_financials``            report period + period + statement
earnings                               ``earnings``, ``ticker=``           report period + source form
interest rates                         ``interest_rates``, ``bank=``       decision date (a revision is ignored)
inflation, yield curve                 same name                           date
labor                                  ``labor``                           release + date
filing items metadata                  ``filing_metadata``, ``ticker=``    filing type + filing date
KPIs                                   ``kpi_*``, ``ticker=``              report period + accession
=====================================  ==================================  ======================================

Example:
    >>> import tempfile
    >>> app = create_receiver(tempfile.mkdtemp(), "whsec_test")
    >>> app.title
    'fdkit webhook receiver'
"""

from __future__ import annotations

import asyncio
import errno
import hashlib
import logging
import os
import re
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from fastapi import FastAPI, Request
from fastapi.responses import Response
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from fdkit.lake.delta import require_deltalake
from fdkit.lake.io import (
    UnsafePathError,
    atomic_write_bytes,
    bump_generation,
    parquet_bytes,
    plan_tables,
    safe_segment,
)
from fdkit.lake.ledger import Ledger
from fdkit.lake.reader import LakeReader
from fdkit.lake.writer import LakeWriter
from fdkit.webhooks.events import EVENT_TYPES, Event, parse_event
from fdkit.webhooks.signing import DEFAULT_TOLERANCE, HEADER, SignatureError, check_header, verify
from fdkit.wire.responses import PayloadTooLarge, error_response, json_response, problem_response, read_capped

__all__ = ["create_receiver", "Landing", "read_landed", "PoisonEvent", "readable_by_folder", "ticker_spelling"]

log = logging.getLogger("fdkit.webhooks")


def _safe(*parts: Any) -> str:
    text = "_".join(str(p) for p in parts if p is not None)
    clean = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in text)
    return clean[:80] + "-" + hashlib.sha1(text.encode()).hexdigest()[:8]


@dataclass(frozen=True)
class LandingRule:
    """Where one event family's records land, and what one landing replaces (the module's table, as data).

    Attributes:
        dataset: the lake dataset.
        partition: the hive-partition column (``ticker``, ``bank``) or ``None``.
        key: fields naming one landed file: what an amendment or a retry replaces.
        key_from: take the key fields from the ``payload`` header or from each group's first ``record``.
        prefix: a label in the file name (``None``: none).
        per: ``event`` (one file), ``record`` (one file a record) or ``period`` (one per report period + period).
        revision: ``replace`` (the same key is rewritten), ``newest_filing`` (an older filing arriving late is
            ignored), ``ignore`` (a published key is never revised).
        endpoint: flatten the records with this endpoint's shape before landing.
        amends: an amended form (``4/A``) replaces the filing it amends (see :meth:`Landing._amendments`).
        required: fields every landed record must carry (not null, not empty): the partition column and what
            identifies a record in the lake (the dataset's ``fdkit.lake.io.RECORD_KEYS`` among them); an event with
            a record that lacks one is refused whole (:class:`PoisonEvent`). A key field the spec lets be null
            (a release's ``report_period``, a filing's ``filing_date``) is not required: a record without it is
            keyed by its own fields (:meth:`file_key`).
        ledger: fields the receiver's ledger keeps of each landed row (:class:`fdkit.lake.ledger.Ledger`): what
            ``fdkit mirror`` never replaces and ``fdkit lake validate`` finds again (default: ``required``).
        nullable: key fields the spec lets be null; without one, a group is keyed by its records (:meth:`file_key`).
    """

    dataset: str
    partition: str | None
    key: tuple[str, ...]
    key_from: Literal["payload", "record"] = "record"
    prefix: str | None = "rp"
    per: Literal["event", "record", "period"] = "event"
    revision: Literal["replace", "newest_filing", "ignore"] = "replace"
    endpoint: str | None = None
    amends: bool = False
    required: tuple[str, ...] = ()
    ledger: tuple[str, ...] = ()
    nullable: tuple[str, ...] = ()

    def ledger_fields(self) -> tuple[str, ...]:
        """The fields the ledger keeps of each landed row."""
        return self.ledger or self.required

    def file_key(self, source: dict[str, Any], group: list[dict[str, Any]], event: Event) -> str:
        """The name of the file a group of records lands in: its key fields, or its records' own fields.

        A key field that is null (the spec allows a release's ``report_period`` and a filing's ``filing_date`` to
        be) cannot tell two groups apart: the name then also carries a digest of the records themselves, so a
        redelivery lands on the same file and a different record never replaces it.
        """
        values = [source.get(f) for f in self.key]
        if any(_missing(source.get(f)) for f in self.nullable):
            digest = hashlib.sha1(orjson.dumps(group, option=orjson.OPT_SORT_KEYS, default=str)).hexdigest()[:12]
            values.append(f"r{digest}")
        return _safe(self.prefix, *values, *self.suffix(event))

    def rows(self, event: Event) -> list[dict[str, Any]]:
        """The event's records as lake rows, each ticker spelt as the lake spells it (``aapl`` lands as ``AAPL``)."""
        recs = [_spelt(r) for r in event.records()]
        if self.endpoint is None:
            return recs
        from fdkit.catalog.endpoints import get
        from fdkit.frames.typed import records_of

        ep = get(self.endpoint)
        flat, fill = records_of(ep, {}, {ep.response_key: recs})
        return [{**fill, **r, **dict(ep.row_filter)} for r in flat]

    def groups(self, rows: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
        """The rows of each landed file."""
        if self.per == "record":
            return [[r] for r in rows]
        if self.per == "period":
            out: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
            for r in rows:
                out.setdefault((r.get("report_period"), r.get("period")), []).append(r)
            return [out[k] for k in sorted(out, key=str)]
        return [rows]

    def suffix(self, event: Event) -> tuple[str, ...]:
        """What else names the file: the family, where several families share a dataset."""
        return (event.family,) if self.per == "period" else ()


#: statement datasets whose landed filings also land their values as ``statement_vintages`` (what the lake's
#: first-report invariant reads)
VINTAGE_DATASETS = ("income_statements", "balance_sheets", "cash_flow_statements")
#: numeric fields of a statement record that are not reported values
_NOT_VINTAGES = {"cik", "fiscal_year", "fiscal_quarter", "report_period", "filing_date"}

#: every event family's landing rule (see the module docstring's table)
LANDING: dict[str, LandingRule] = {
    **{
        f: LandingRule(
            f,
            "ticker",
            ("report_period", "period"),
            per="record",
            revision="newest_filing",
            required=("ticker", "report_period", "period"),
        )
        for f in ("income_statements", "balance_sheets", "cash_flow_statements", "financial_metrics")
    },
    **{
        f: LandingRule(
            f,
            "ticker",
            ("accession_number", "form_type", "filing_date"),
            key_from="payload",
            prefix="acc",
            amends=True,
            required=("ticker", "name"),
            ledger=("ticker", "accession_number", "name"),
        )
        for f in ("insider_trades", "insider_ownership")
    },
    **{
        f: LandingRule(
            "segmented_financials",
            "ticker",
            ("report_period", "period"),
            per="period",
            endpoint=f,
            required=("ticker", "report_period", "period", "statement", "line_item", "category", "label"),
            ledger=("ticker", "report_period", "period"),
        )
        for f in ("income_statement_segments", "balance_sheet_segments", "cash_flow_statement_segments")
    },
    "earnings": LandingRule(
        "earnings",
        "ticker",
        ("report_period", "source_type"),
        endpoint="earnings",
        required=("ticker", "report_period", "source_type"),
    ),
    "interest_rates": LandingRule(
        "interest_rates", "bank", ("date",), prefix="date", revision="ignore", required=("bank", "date")
    ),
    "inflation": LandingRule(
        "inflation", None, ("date",), key_from="payload", prefix="date", required=("series", "date")
    ),
    "labor": LandingRule(
        "labor", None, ("release", "date"), key_from="payload", prefix="date", required=("series", "date")
    ),
    "yield_curve": LandingRule("yield_curve", None, ("date",), key_from="payload", prefix="date", required=("date",)),
    "filing_items.metadata": LandingRule(
        "filing_metadata",
        "ticker",
        ("filing_type", "filing_date", "accession_number"),
        prefix=None,
        required=("ticker", "filing_type"),
        ledger=("ticker", "filing_type", "filing_date", "accession_number"),
        nullable=("filing_date",),
    ),
    **{
        f: LandingRule(
            d,
            "ticker",
            ("report_period", "accession_number"),
            key_from="payload",
            required=("ticker",),
            ledger=("ticker", "report_period"),
            nullable=("report_period",),
        )
        for f, d in (
            ("forward_guidance", "kpi_guidance"),
            ("non_gaap_metrics", "kpi_non_gaap"),
            ("operating_kpis", "kpi_metrics"),
        )
    },
}
if set(LANDING) != {t.removesuffix(".created") for t in EVENT_TYPES}:  # pragma: no cover - one rule per family
    raise RuntimeError("every webhook event family needs exactly one landing rule")


class Landing:
    """Writes events into a lake (through :class:`fdkit.lake.writer.LakeWriter`) and keeps its ledger.

    Events of different datasets land at the same time (each in a worker thread); events of one dataset one after
    the other, under that dataset's lock (which ``fdkit mirror`` and every other fdkit writer of the lake hold too).
    """

    def __init__(self, lake: str | os.PathLike[str], *, max_files: int | None = None) -> None:
        self.lake = Path(lake)
        self.max_files = MAX_EVENT_FILES if max_files is None else max_files
        (self.lake / "_webhooks").mkdir(parents=True, exist_ok=True)
        self.writer = LakeWriter(self.lake)
        self.ledger = Ledger(self.lake)
        self._tl = threading.local()  # one landing's staged files, per worker thread

    def datasets(self, event: Event) -> tuple[str, ...]:
        """The datasets an event may write (the locks its landing holds)."""
        rule = LANDING[event.family]
        return (rule.dataset, "statement_vintages") if rule.dataset in VINTAGE_DATASETS else (rule.dataset,)

    @property
    def _db(self) -> sqlite3.Connection:
        """The ledger's SQLite connection (its ``events`` and ``landed`` tables, for a reader's own query)."""
        return self.ledger._db

    def seen(self, event_id: str) -> bool:
        """Whether the event id was landed before."""
        return self.ledger.seen(event_id)

    def landed_ids(self) -> list[str]:
        """Every landed event id."""
        return self.ledger.landed_ids()

    def land(self, event: Event) -> int:
        """Write the event's records, whole or not at all; return how many were written (0: an ignored late version).

        Every file of the event is planned first (typed, checked, encoded: :func:`fdkit.lake.plan_write`); only when
        all are ready are they written. A record that does not fit its schema raises before anything is written.

        Raises:
            PoisonEvent: a record does not fit (the event is refused whole, 400, and dead-lettered).
        """
        tl = self._tl
        tl.staged = []  # files outside the tables: parked filings
        tl.adds = {}  # dataset -> file (relative to the table) -> rows
        tl.removes = {}  # dataset -> files (relative) the commit removes
        tl.unparked = []
        tl.live = {}  # dataset -> a file's path by key -> its live file
        tl.keys = {}  # dataset -> (partition value, ledger fields) of each row made live
        try:
            n = self._land(event)
        except (UnsafePathError, PoisonEvent):
            raise
        except (ValueError, TypeError, KeyError, OverflowError) as exc:
            raise PoisonEvent(f"{type(exc).__name__}: {exc}"[:300]) from exc
        for path, data in tl.staged:
            atomic_write_bytes(path, data)
        for dataset in sorted({*tl.adds, *tl.removes}):  # one Delta commit per dataset
            # a log that cannot be committed to raises LakeWriteError (an OSError): 503, the sender delivers again
            self.writer.commit(
                dataset,
                tl.adds.get(dataset, {}).items(),
                tl.removes.get(dataset, ()),
                write_file=_file_writer(self.lake / dataset),
            )
        for twin in tl.unparked:  # after the commit that made them live again
            twin.unlink(missing_ok=True)
        return n

    def _table(self, dataset: str) -> dict[Path, Path]:
        """The live files of a dataset's Delta table by key path (``<lake>/<dataset>/<part>/<key>.parquet``).

        A plain Parquet dataset (the bundled lake's, an older fdkit's) is converted to a Delta table first
        (:func:`fdkit.lake.io.convert_dataset`, logged), so that every landing is one commit to a log.
        """
        if dataset not in self._tl.live:
            folder = self.lake / safe_segment(dataset, "dataset")
            live = self.writer.live(dataset)  # converted once, under the dataset's lock (logged)
            self._tl.live[dataset] = {_key_path(folder / f.path): folder / f.path for f in live}
        return self._tl.live[dataset]

    def _current(self, path: Path) -> Path | None:
        """The live file landed under ``path`` (its key path), or ``None``."""
        dataset = path.relative_to(self.lake).parts[0]
        return self._table(dataset).get(path)

    def _in_folder(self, folder: Path) -> list[tuple[Path, Path]]:
        """``(key path, live file)`` of every live file of a table's folder (``ticker=X/``)."""
        dataset = folder.relative_to(self.lake).parts[0]
        return sorted((k, f) for k, f in self._table(dataset).items() if k.parent == folder)

    def _add(self, path: Path, table: pa.Table) -> None:
        """Stage ``table`` as the live file of key path ``path`` (replacing the one landed under it before).

        The file is named by its key and its content (``<key>.v<digest>.parquet``): a redelivered event plans the
        same file again, which the commit skips as live already.
        """
        folder = self.lake / path.relative_to(self.lake).parts[0]
        digest = _digest(table)
        rel = (path.parent / f"{path.stem}.v{digest}.parquet").relative_to(folder).as_posix()
        self._tl.adds.setdefault(folder.name, {})[rel] = table
        current = self._current(path)
        if current is not None and current.relative_to(folder).as_posix() != rel:
            self._tl.removes.setdefault(folder.name, set()).add(current.relative_to(folder).as_posix())

    def _park(self, path: Path, twin: Path) -> None:
        """Stage moving the live file of key path ``path`` out of its table, to ``twin`` (an amended filing)."""
        current = self._current(path)
        if current is None:
            return
        folder = self.lake / path.relative_to(self.lake).parts[0]
        self._tl.staged.append((twin, current.read_bytes()))
        self._tl.removes.setdefault(folder.name, set()).add(current.relative_to(folder).as_posix())

    def _unpark(self, twin: Path, path: Path, partition: str | None) -> None:
        """Stage moving a parked filing ``twin`` back into its table under key path ``path``."""
        if not twin.exists():
            return
        table = pq.read_table(twin)
        if partition and partition not in table.column_names and "=" in path.parent.name:  # parked by an older fdkit
            table = table.append_column(partition, pa.array([path.parent.name.split("=", 1)[1]] * len(table)))
        self._add(path, table)
        self._tl.unparked.append(twin)

    def dead_letter(self, event_id: str, event_type: str, reason: str, body: bytes) -> None:
        """Keep a refused event (with why) in ``_webhooks/dead-letter.jsonl`` and the log."""
        log.warning("webhook event %s (%s) refused: %s", event_id, event_type, reason)
        line = orjson.dumps(
            {
                "id": event_id,
                "type": event_type,
                "reason": reason,
                "at": time.time(),
                "body": body.decode("utf-8", "replace"),
            }
        )
        with open(self.lake / "_webhooks" / "dead-letter.jsonl", "ab") as f:
            f.write(line + b"\n")

    def _land(self, event: Event) -> int:
        rule = LANDING[event.family]
        rows = rule.rows(event)
        if not rows:
            return 0
        _check_rows(rule, event, rows)
        head = event.payload
        n = 0
        groups = rule.groups(rows)
        if len(groups) > self.max_files:  # one file a record: a landing's time grows with them (~7 ms each)
            raise EventTooLarge(
                f"the event would land {len(groups):,} files in {rule.dataset} (one per {rule.per}); "
                f"a receiver lands at most {self.max_files:,} per event: split it"
            )
        typed = self._typed(rule.dataset, rows)  # typed once for the event: a group's file is a slice of it
        position = {id(r): i for i, r in enumerate(rows)}
        for group in groups:
            source = head if rule.key_from == "payload" else group[0]
            key = rule.file_key(source, group, event)
            table = typed.take(pa.array([position[id(r)] for r in group], pa.int64()))
            partition_value = group[0].get(rule.partition) if rule.partition else None
            path = self._path(rule.dataset, rule.partition, partition_value, key)
            if rule.revision == "ignore" and self._current(path) is not None:
                continue  # a revision of a published value is ignored
            current = self._current(path)
            if rule.revision == "newest_filing" and current is not None and not self._newer(current, group[0]):
                continue  # an older version arriving late never replaces a newer one
            if rule.amends:
                path = self._amendments(path, head, group, rule.partition)
            n += self._stage(rule.dataset, table, to=path)
            if not path.is_relative_to(self.lake / "_webhooks"):  # live (not a filing its amendment replaced)
                self._ledger_rows(rule, group)
        if rule.dataset in VINTAGE_DATASETS:
            self._vintages(rule, head, rows)
        return n

    def _ledger_rows(self, rule: LandingRule, group: list[dict[str, Any]]) -> None:
        """Stage the ledger's entry of each row of a group made live: its partition value and ledger fields."""
        fields = rule.ledger_fields()
        staged = self._tl.keys.setdefault(rule.dataset, [])
        for r in group:
            staged.append((r.get(rule.partition) if rule.partition else None, {f: r.get(f) for f in fields}))

    def _vintages(self, rule: LandingRule, head: dict[str, Any], rows: list[dict[str, Any]]) -> None:
        """Stage the values a statement filing reports as ``statement_vintages`` rows (one file per filing).

        The lake keeps every reported value of a statement field with the filing that reported it; a filing that
        arrives by webhook is one more vintage, whether its statement row lands or an older filing arriving late
        is ignored. Balance-sheet values are ``instant``; TTM rows are derived, not reported, and have none.
        """
        out = []
        for rec in rows:
            period = "instant" if rule.dataset == "balance_sheets" else str(rec.get("period"))
            if period not in ("annual", "quarterly", "instant") or str(rec.get("period")) == "ttm":
                continue
            for name, value in rec.items():
                if name in _NOT_VINTAGES or isinstance(value, bool) or not isinstance(value, (int, float)):
                    continue
                if value != value:  # NaN
                    continue
                out.append(
                    {
                        "ticker": rec["ticker"],
                        "period": period,
                        "report_period": rec["report_period"],
                        "field": name,
                        "value": float(value),
                        "filing_date": rec.get("filing_date") or head.get("filing_date"),
                        "accession_number": rec.get("accession_number") or head.get("accession_number"),
                        "form_type": rec.get("form_type") or head.get("form_type"),
                    }
                )
        if not out or _missing(out[0]["filing_date"]):
            return
        first = out[0]
        key = _safe("vintage", rule.dataset, first["filing_date"], first["form_type"], first["accession_number"])
        path = self._path("statement_vintages", "ticker", first["ticker"], key)
        self._write("statement_vintages", pd.DataFrame(out), "ticker", key, to=path)

    def _path(self, dataset: str, partition: str | None, value: Any, key: str) -> Path:
        folder = self.lake / safe_segment(dataset, "dataset")
        if partition:
            folder = folder / f"{partition}={safe_segment(value, partition)}"
        return folder / f"{key}.parquet"

    def _amendments(self, path: Path, head: dict[str, Any], rows: list[dict[str, Any]], partition: str | None) -> Path:
        """Plan an insider filing's landing so that amendments replace what they amend, in any arrival order.

        The matching key is (ticker, insider ``name``, base form): each amendment (``4/A``) replaces the latest
        filing of that key filed before it (the original, or the previous amendment). Replaced files are parked
        under ``_webhooks/amended/`` rather than deleted, so an original that arrives after its amendment is parked
        at once, and an amendment that arrived before an older original is re-applied correctly: the live files
        are always "every filing of the key minus the ones amended", whatever the order. Where no filing of the
        key is in the lake, the amendment simply lands.

        Returns:
            Where the new file goes (``path``, or its parked twin when an amendment already replaced it); the
            moves of other files are staged (out of the table: :meth:`_park`; back in: :meth:`_unpark`).
        """
        parked_dir = self.lake / "_webhooks" / "amended" / path.parent.relative_to(self.lake)
        form = str(head.get("form_type") or "")
        names = frozenset(str(r.get("name")) for r in rows)

        def rank(filed: Any, form: str, accession: Any) -> tuple[pd.Timestamp, bool, str]:
            return pd.Timestamp(filed or pd.Timestamp.max), form.endswith("/A"), str(accession)

        filings: dict[Path, tuple[tuple[pd.Timestamp, bool, str], bool]] = {}  # key path -> (rank, is parked)
        old_parked = sorted(parked_dir.glob("*.parquet")) if parked_dir.exists() else []
        parked_files = [(parked_dir / p.name, p) for p in old_parked]
        for keyed, parked in ((self._in_folder(path.parent), False), (parked_files, True)):
            for key_path, other in keyed:
                if key_path.name == path.name:
                    continue
                old = pd.read_parquet(other, columns=["name", "form_type", "filing_date", "accession_number"])
                old_form = str(old["form_type"].iloc[0]) if len(old) else ""
                same_form = old_form.removesuffix("/A") == form.removesuffix("/A")
                if not same_form or frozenset(old["name"].astype(str)) != names:
                    continue
                filings[path.parent / key_path.name] = (
                    rank(old["filing_date"].iloc[0], old_form, old["accession_number"].iloc[0]),
                    parked,
                )
        filings[path] = (rank(head.get("filing_date"), form, head.get("accession_number")), False)
        ordered = sorted(filings, key=lambda p: filings[p][0])
        amended = {ordered[i - 1] for i, p in enumerate(ordered) if i and filings[p][0][1]}
        for live in ordered:
            if live == path:
                continue
            parked, twin = filings[live][1], parked_dir / live.name
            if live in amended and not parked:
                self._park(live, twin)
            elif live not in amended and parked:
                self._unpark(twin, live, partition)
        if path not in amended:
            return path
        self._park(path, parked_dir / path.name)  # an earlier landing of this filing, live: where its amendment put it
        return parked_dir / path.name

    @staticmethod
    def _newer(path: Path, rec: dict[str, Any]) -> bool:
        old = pd.read_parquet(path, columns=["filing_date", "form_type"]).iloc[0]
        old_rank = (pd.Timestamp(old["filing_date"]), str(old["form_type"]).endswith("/A"))
        new_rank = (pd.Timestamp(rec["filing_date"]), str(rec.get("form_type") or "").endswith("/A"))
        return not new_rank < old_rank

    def _typed(self, dataset: str, rows: list[dict[str, Any]]) -> pa.Table:
        """An event's rows as one typed table (conformed once: a file a record costs a slice, not a conform)."""
        ((_, table),) = plan_tables(self.lake, dataset, pd.DataFrame(rows), mode="append", part="event")
        return table

    def _stage(self, dataset: str, table: pa.Table, to: Path) -> int:
        """Stage ``table`` as the file at ``to`` (a parked path for a filing already amended); its row count."""
        if to.is_relative_to(self.lake / "_webhooks"):  # a filing its amendment replaced already: parked
            self._tl.staged.append((to, parquet_bytes(table)))
        else:
            self._table(dataset)
            self._add(to, table)
        return int(table.num_rows)

    def _write(self, dataset: str, df: pd.DataFrame, partition: str | None, key: str, to: Path) -> int:
        """Stage the typed file of ``df``; ``to`` is its path (a parked path for a filing already amended)."""
        planned = plan_tables(
            self.lake, dataset, df, partition_by=partition, mode="append", part=key, keep_partition=True
        )
        for p, table in planned:
            dest = to.parent / p.name if p.name == to.name else p
            if dest.is_relative_to(self.lake / "_webhooks"):  # a filing its amendment replaced already: parked
                self._tl.staged.append((dest, parquet_bytes(table)))
            else:
                self._table(dataset)
                self._add(dest, table)
        return len(df)

    def commit(self, event: Event) -> None:
        """Record the event id and the rows it made live (durably, one transaction) after its records landed."""
        self.ledger.record(str(event.id), event.type, getattr(self._tl, "keys", {}))
        self._tl.keys = {}
        bump_generation(self.lake)  # fdkit serve over this lake answers with the new rows from its next request

    def close(self) -> None:
        """Close the ledger."""
        self.ledger.close()


#: seconds a delivery has to send its whole body once its headers arrived (``FDKIT_BODY_TIMEOUT``); the headers have
#: ``FDKIT_HEADER_TIMEOUT`` seconds (``fdkit webhooks listen`` runs on the server's protocol, fdkit.server.protocol)
BODY_TIMEOUT = float(os.environ.get("FDKIT_BODY_TIMEOUT") or 10.0)
#: the largest body a delivery may have (413 beyond; ``fdkit webhooks listen --max-body-bytes``)
MAX_BODY_BYTES = 4 * 2**20
#: the most files one event may land (413 beyond): a statement event lands a file per record (7 to 12 ms each,
#: under its dataset's lock, which the next event of that dataset waits for): 250 bound that wait to about 3 s (a
#: statement filing's event holds a few dozen records)
MAX_EVENT_FILES = 250


def create_receiver(
    lake: str | os.PathLike[str],
    secret: str | bytes,
    *,
    tolerance: int = DEFAULT_TOLERANCE,
    max_body_bytes: int = MAX_BODY_BYTES,
    body_timeout: float = BODY_TIMEOUT,
    max_event_files: int = MAX_EVENT_FILES,
) -> FastAPI:
    """The receiver as an ASGI app (``uvicorn`` it, or mount it in another app).

    The event loop only reads bodies: checking a signature, parsing and landing run in worker threads, so a large
    event never holds up the others (events of one dataset land one after the other, under its lock).

    Args:
        lake: the lake records land in.
        secret: the shared signing secret.
        tolerance: seconds a signature timestamp may be off.
        max_body_bytes: a larger body is refused with 413 while it is read (never buffered whole).
        body_timeout: seconds the whole body may take once the headers arrived: a slower one is answered 408 and
            its connection closed.
        max_event_files: an event that would land more files is answered 413 (and dead-lettered).

    Returns:
        The FastAPI app; ``app.state.landing`` is the :class:`Landing`.

    Raises:
        LakeError: without the deltalake package (the ``delta`` extra): the receiver lands Delta tables.

    Example:
        >>> import tempfile
        >>> create_receiver(tempfile.mkdtemp(), "whsec_x", max_body_bytes=1024).state.landing.lake.is_dir()
        True
    """
    require_deltalake()  # (said at start, not as a 500 on the first event)
    app = FastAPI(title="fdkit webhook receiver", openapi_url=None, docs_url=None, redoc_url=None)
    landing = Landing(lake, max_files=max_event_files)
    app.state.landing = landing

    @app.get("/healthz")
    def _health() -> Response:
        return json_response({"status": "ok", "landed": len(landing.landed_ids())})

    @app.post("/{path:path}")
    async def _receive(request: Request, path: str) -> Response:
        header = request.headers.get(HEADER)
        try:  # what the header alone can tell, before a byte of the body is read
            check_header(header, tolerance=tolerance)
        except SignatureError as exc:
            return error_response(401, "Invalid signature", str(exc))
        try:
            async with asyncio.timeout(body_timeout):
                body = await read_capped(request, max_body_bytes)
        except PayloadTooLarge as exc:
            return problem_response(exc)
        except TimeoutError:
            answer = error_response(
                408,
                "Request Timeout",
                f"the request body did not arrive within {body_timeout:g} seconds of its headers",
            )
            answer.headers["connection"] = "close"
            return answer
        return await run_in_threadpool(_handle, landing, secret, body, header, tolerance)

    return app


def _handle(landing: Landing, secret: str | bytes, body: bytes, header: str | None, tolerance: int) -> Response:
    """Check, parse and land one delivery's body (in a worker thread)."""
    try:
        verify(secret, body, header, tolerance=tolerance)
    except SignatureError as exc:
        return error_response(401, "Invalid signature", str(exc))
    try:
        event = parse_event(body)
    except ValidationError as exc:
        first = exc.errors()[0] if exc.errors() else {"msg": str(exc), "loc": ()}
        where = ".".join(str(p) for p in first.get("loc", ()))
        msg = str(first["msg"])
        return error_response(400, "Invalid event", f"{where}: {msg}" if where else msg)
    except ValueError as exc:
        return error_response(400, "Invalid JSON", str(exc)[:200])
    return _land(landing, event, body)


class PoisonEvent(ValueError):
    """An event whose records do not fit their schema: refused whole (400), nothing of it written."""


class EventTooLarge(PoisonEvent):
    """An event that would land more files than :data:`MAX_EVENT_FILES`: refused whole (413), dead-lettered."""


def ticker_spelling(value: Any) -> Any:
    """A ticker as the lake and the service spell it: upper case, no surrounding blanks (other values as they are).

    The service looks a ticker up in upper case (``?ticker=aapl`` asks for ``AAPL``): a record landed as ``aapl``
    would be a ticker of its own that no request reaches.

    Example:
        >>> ticker_spelling(" aapl "), ticker_spelling("BRK.B"), ticker_spelling(None)
        ('AAPL', 'BRK.B', None)
    """
    return value.strip().upper() if isinstance(value, str) else value


def _spelt(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with its ``ticker`` spelt as the lake spells it (a copy when it changes)."""
    ticker = record.get("ticker")
    spelt = ticker_spelling(ticker)
    return record if spelt == ticker else {**record, "ticker": spelt}


def _missing(value: Any) -> bool:
    if value is None or (isinstance(value, str) and not value.strip()):
        return True
    return isinstance(value, float) and value != value  # NaN


def _check_rows(rule: LandingRule, event: Event, rows: list[dict[str, Any]]) -> None:
    """Refuse an event with a record that lacks a required field or names another partition than its envelope.

    Raises:
        PoisonEvent: naming the record (its position), the field and the rule.
    """
    head = event.payload
    for i, row in enumerate(rows, 1):
        where = f"record {i} of {len(rows)} ({event.family})"
        absent = [f for f in rule.required if _missing(row.get(f))]
        if absent:
            raise PoisonEvent(
                f"{where} has no {', '.join(absent)}: every record landed in {rule.dataset} needs "
                f"{', '.join(rule.required)}"
            )
        part = rule.partition
        said = ticker_spelling(head.get(part)) if part == "ticker" else head.get(part) if part else None
        if part and not _missing(said) and str(row[part]) != str(said):
            raise PoisonEvent(
                f"{where} says {part} {row[part]!r} but the event is about {head[part]!r} (data.object.{part}): "
                f"a record lands under its envelope's {part} only"
            )


#: errnos of a full disk (or quota): 507 Insufficient Storage
_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


def _land(landing: Landing, event: Event, body: bytes) -> Response:
    """Land one event and answer; nothing is acknowledged unless its files are written and its id recorded.

    A write that fails (a full disk: 507, any other OS or database error: 503) answers JSON ``{"error",
    "message"}`` and records nothing, so the sender delivers the event again; the files an event writes are named by
    its records, so a redelivery replaces what a failed attempt left and the event lands once.
    """
    with landing.writer.lock(*landing.datasets(event)):  # the seen check too: a concurrent redelivery waits
        try:
            if landing.seen(str(event.id)):
                return json_response({"status": "duplicate", "id": str(event.id)})
            try:
                n = landing.land(event)
            except (UnsafePathError, PoisonEvent) as exc:  # 400/413, so the sender stops retrying a poison event
                _dead_letter(landing, event, str(exc), body)
                if isinstance(exc, EventTooLarge):
                    return error_response(413, "Payload Too Large", f"event {event.id}: {exc}")
                return error_response(400, "Invalid event", f"event {event.id}: {exc}")
            landing.commit(event)
        except (OSError, sqlite3.Error) as exc:
            return _write_failed(event, exc)
    return json_response({"status": "landed", "id": str(event.id), "records": n})


def _dead_letter(landing: Landing, event: Event, reason: str, body: bytes) -> None:
    try:
        landing.dead_letter(str(event.id), event.type, reason, body)
    except OSError as exc:  # the refusal stands: a full disk only loses the dead letter (logged)
        log.error("webhook event %s: the dead letter could not be written: %s", event.id, exc)


def _write_failed(event: Event, exc: BaseException) -> Response:
    full = (isinstance(exc, OSError) and exc.errno in _FULL) or "full" in str(exc).lower()
    what = "the disk is full" if full else f"{type(exc).__name__}: {exc}"[:200]
    log.error("webhook event %s (%s) not landed: %s", event.id, event.type, what)
    status, title = (507, "Insufficient Storage") if full else (503, "Service Unavailable")
    return error_response(
        status, title, f"event {event.id} was not landed ({what}); nothing was acknowledged: deliver it again later"
    )


def read_landed(lake: str | os.PathLike[str], dataset: str) -> pd.DataFrame:
    """Read a dataset the receiver landed (typed like the service's lake)."""
    return LakeReader(lake).read(dataset)


def _file_writer(folder: Path) -> Any:
    """Writes one data file of a table atomically (through this module's ``atomic_write_bytes``)."""

    def write_file(rel: Any, table: pa.Table) -> None:
        atomic_write_bytes(folder / rel, parquet_bytes(readable_by_folder(table, Path(rel))))

    return write_file


#: the type a Parquet dataset reader (pyarrow, so ``pd.read_parquet``) gives a ``key=value/`` folder's column
_FOLDER_TYPE = pa.dictionary(pa.int32(), pa.string())


def readable_by_folder(table: pa.Table, rel: Path) -> pa.Table:
    """``table`` with the columns its ``key=value/`` folders name typed as a Parquet dataset reader types them.

    ``pd.read_parquet(folder)`` (pyarrow's dataset discovery) adds a hive folder's key as a dictionary column with
    int32 indices and refuses a file whose own column of that name is plain text (``incompatible types: string vs
    dictionary``); every other dictionary column gets int32 indices too, so files of few and of many values agree.
    Readers of the table's log (fdkit, delta-rs, DuckDB, Polars) read the same text.

    Example:
        >>> t = pa.table({"ticker": ["AAPL"], "x": [1.0]})
        >>> str(readable_by_folder(t, Path("ticker=AAPL/f.parquet")).schema.field("ticker").type)
        'dictionary<values=string, indices=int32, ordered=0>'
    """
    keys = {part.split("=", 1)[0] for part in rel.parts[:-1] if "=" in part}
    for i, field in enumerate(table.schema):
        typ = field.type
        if field.name in keys and (pa.types.is_string(typ) or pa.types.is_large_string(typ)):
            wanted: pa.DataType = _FOLDER_TYPE
        elif pa.types.is_dictionary(typ) and typ.index_type != pa.int32():
            wanted = pa.dictionary(pa.int32(), typ.value_type)
        else:
            continue
        table = table.set_column(i, field.with_type(wanted), table.column(i).cast(wanted))
    return table


def _digest(table: pa.Table) -> str:
    """A table's content digest, from its Arrow IPC stream (the same rows give the same file name).

    Hashing the IPC stream costs a fiftieth of encoding the table as Parquet (0.1 ms for a statement record).
    """
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as stream:
        stream.write_table(table)
    return hashlib.sha1(sink.getvalue()).hexdigest()[:12]


_VERSIONED = re.compile(r"(.+)\.v[0-9a-f]{12}\.parquet")


def _key_path(path: Path) -> Path:
    """The key path of a live file: ``<key>.parquet`` for ``<key>.v<digest>.parquet`` (or an older fdkit's name)."""
    m = _VERSIONED.fullmatch(path.name)
    return path.with_name(f"{m.group(1)}.parquet") if m else path
