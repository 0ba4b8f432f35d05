"""Payload shapes: how each nested record of the service maps to flat rows and back, in one place.

The lake and the frames hold flat rows (one typed column per field); some payloads nest. A :class:`Shape` knows
both directions and the JSON schema of its records:

* ``flat``: records are rows (most endpoints).
* ``earnings``: ``quarterly``/``annual`` objects <-> ``quarterly_<field>``/``annual_<field>`` columns.
* ``segment_items`` (segmented revenues): reports with ``items[{name, amount, start_period, end_period,
  segments[{label, type}]}]`` <-> one row per item per segment member (an item without members keeps one row;
  ``line_item`` is accepted in place of ``name``).
* ``line_items`` (the statement ``/segments`` paths): reports with ``{line_item: {product|segment: [{label,
  value}]}}`` <-> one row per line item, category and label.
* ``statement_line_items`` (``/financials/segments``): the same per statement, ``{income_statement: {line_item:
  ...}, balance_sheet: ..., cash_flow_statement: ...}`` <-> rows with a ``statement`` column.
* ``as_reported`` / ``as_reported_bundle`` (``/financials/*/as-reported``): reports with line-item trees <-> one
  row per line item (``statement``, ``label``, ``value``, ``parent``).
* ``index_funds`` (``/index-funds``): a fund's ``holdings`` or a security's ``funds`` <-> (fund, ticker) rows.
* ``statement_bundle`` (``/financials``): one object ``{income_statements: [...], balance_sheets: [...],
  cash_flow_statements: [...]}`` <-> one row per (ticker, report period, period) with every statement's fields.

The catalog names each endpoint's shape (``Endpoint.shape``); frames flatten with it, the server nests with it,
the OpenAPI document describes records with it, and ``fdkit mirror`` and the webhook receiver land rows with it.

Example:
    >>> rows = SHAPES["earnings"].flatten([{"ticker": "NVDA", "quarterly": {"revenue": 1.0}, "annual": {}}])
    >>> rows
    [{'ticker': 'NVDA', 'quarterly_revenue': 1.0}]
    >>> SHAPES["earnings"].nest(rows)
    [{'quarterly': {'revenue': 1.0}, 'annual': {}, 'ticker': 'NVDA'}]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from fdkit.catalog.schema import EARNINGS_DERIVED, SCHEMAS, SEGMENT_REPORT, fields_of

#: earnings figures the service returns "only when calculable": absent, not null, where the lake cannot derive them
_EARNINGS_OPTIONAL = frozenset(
    {f for fields in EARNINGS_DERIVED.values() for f in fields}
    | {"revenue_surprise", "eps_surprise", "estimated_revenue", "estimated_earnings_per_share"}
)

__all__ = ["Shape", "SHAPES", "Record", "JsonSchema", "SEGMENT_LINE_ITEMS"]

Record = dict[str, Any]
JsonSchema = dict[str, Any]
#: builds the JSON schema of one flat record of a schema, leaving out some fields
RecordSchema = Callable[..., JsonSchema]


class Shape:
    """A flat payload: records are rows. Subclasses nest.

    Attributes:
        name: the shape's name in the catalog.
    """

    name = "flat"
    #: a response's top-level ``ticker`` names the records' ticker (false where it names something else: a fund)
    fills_ticker = True
    #: one row a record (a ``limit`` counts rows); false where a record spans several rows (segments, line items)
    rows_are_records = True

    def payload(self, body: Mapping[str, Any], key: str) -> Any:
        """The records of a response body (before flattening): the value under the endpoint's key.

        Args:
            body: the decoded response.
            key: the endpoint's response key.

        Returns:
            A record, a list of records, or ``None``.
        """
        return body.get(key)

    def wrapper_keys(self, key: str) -> tuple[str, ...]:
        """The top-level keys one of which every answer of the endpoint has (an answer without any is refused).

        Args:
            key: the endpoint's response key.

        Returns:
            The keys (the response key itself, for most shapes).

        Example:
            >>> SHAPES["flat"].wrapper_keys("prices"), SHAPES["index_funds"].wrapper_keys("holdings")
            (('prices',), ('holdings', 'funds'))
        """
        return (key,)

    def flatten(self, records: Sequence[Mapping[str, Any]]) -> list[Record]:
        """Payload records -> flat rows.

        Args:
            records: decoded JSON records.

        Returns:
            Rows whose keys are fields of the row schema (flat records are their own rows: not copied).
        """
        return [r if isinstance(r, dict) else dict(r) for r in records]

    def nest(self, rows: Sequence[Mapping[str, Any]]) -> list[Record]:
        """Flat rows (lake order) -> payload records.

        Args:
            rows: JSON-ready rows.

        Returns:
            Payload records.
        """
        return [dict(r) for r in rows]

    def record_schema(self, schema: str, flat: RecordSchema, drop: tuple[str, ...] = ()) -> JsonSchema:
        """The JSON schema of one payload record.

        Args:
            schema: the row schema's name.
            flat: a builder of a flat record's JSON schema (``flat(schema, drop=...)``).
            drop: fields the payload carries at its top level instead of per record.

        Returns:
            A JSON schema object.
        """
        return flat(schema, drop=drop)

    def __repr__(self) -> str:
        return f"Shape({self.name!r})"


class PrefixedObjects(Shape):
    """Objects nested under fixed keys (``quarterly``/``annual``) <-> ``<key>_<field>`` columns."""

    name = "earnings"
    rows_are_records = False

    def __init__(
        self, keys: tuple[str, ...] = ("quarterly", "annual"), omit_null: frozenset[str] = frozenset()
    ) -> None:
        self.keys = keys
        self.omit_null = omit_null  # fields "returned only when calculable": left out rather than null

    def _split(self, column: str) -> tuple[str, str] | None:
        for k in self.keys:
            if column.startswith(k + "_"):
                return k, column[len(k) + 1 :]
        return None

    def flatten(self, records: Sequence[Mapping[str, Any]]) -> list[Record]:  # noqa: D102
        out = []
        for rec in records:
            row = {k: v for k, v in rec.items() if k not in self.keys}
            for key in self.keys:
                for k, v in (rec.get(key) or {}).items():
                    row[f"{key}_{k}"] = v
            out.append(row)
        return out

    def nest(self, rows: Sequence[Mapping[str, Any]]) -> list[Record]:  # noqa: D102
        out = []
        for row in rows:
            item: Record = {k: {} for k in self.keys}
            for column, v in row.items():
                split = self._split(column)
                if split is None:
                    item[column] = v
                elif v is not None or split[1] not in self.omit_null:
                    item[split[0]][split[1]] = v
            out.append(item)
        return out

    def record_schema(self, schema: str, flat: RecordSchema, drop: tuple[str, ...] = ()) -> JsonSchema:  # noqa: D102
        nested = tuple(f for f in SCHEMAS[schema] if self._split(f))
        base = flat(schema, drop=drop + nested)
        typed = flat(schema)["properties"]  # each nested field keeps its own JSON type (surprises are strings)
        for key in self.keys:
            inner = {f[len(key) + 1 :]: typed[f] for f in nested if f.startswith(key + "_")}
            base["properties"][key] = {"type": "object", "properties": inner}
        return base


_SEGMENT_HEADER = tuple(SEGMENT_REPORT)
#: what a segment member carries beside its label and type (extensions: the member as filed, its hierarchy)
_MEMBER_EXTRAS = ("xbrl_member", "is_subtotal", "parent_label")
#: their JSON types, for the OpenAPI document
MEMBER_EXTRAS_SCHEMA: Mapping[str, Any] = MappingProxyType(
    {
        "xbrl_member": {"type": ["string", "null"]},
        "is_subtotal": {"type": ["boolean", "null"]},
        "parent_label": {"type": ["string", "null"]},
    }
)


class SegmentItems(Shape):
    """Segmented revenues: reports with items, items with segment members <-> one row per item per member."""

    name = "segment_items"
    rows_are_records = False

    def flatten(self, records: Sequence[Mapping[str, Any]]) -> list[Record]:  # noqa: D102
        rows = []
        for rep in records:
            head = {k: v for k, v in rep.items() if k != "items"}
            for i, item in enumerate(rep.get("items") or []):
                if not isinstance(item, dict):
                    continue
                base = {
                    **head,
                    "name": item.get("name", item.get("line_item")),
                    "amount": item.get("amount"),
                    "start_period": item.get("start_period"),
                    "end_period": item.get("end_period"),
                    "item": i,
                }
                members = [m for m in item.get("segments") or [] if isinstance(m, dict)] or [{}]
                for j, m in enumerate(members):
                    rows.append(
                        {
                            **base,
                            "segment_label": m.get("label"),
                            "segment_type": m.get("type"),
                            "xbrl_member": m.get("xbrl_member"),
                            "is_subtotal": m.get("is_subtotal"),
                            "parent_label": m.get("parent_label"),
                            "member": j,
                        }
                    )
        return rows

    def nest(self, rows: Sequence[Mapping[str, Any]]) -> list[Record]:
        """Rows sorted by report (newest first), item number and member number -> reports.

        Rows carry ``item`` (the item's number within its report) so members of one item stay together.
        """
        out: list[Record] = []
        reports: dict[tuple[Any, ...], Record] = {}
        items: dict[tuple[Any, ...], Record] = {}
        for r in rows:
            rkey = (r["ticker"], r["report_period"], r["period"])
            report = reports.get(rkey)
            if report is None:
                report = {k: r.get(k) for k in _SEGMENT_HEADER}
                report["items"] = []
                reports[rkey] = report
                out.append(report)
            ikey = (*rkey, r.get("item"))
            item = items.get(ikey)
            if item is None:
                item = {k: r.get(k) for k in ("name", "amount", "start_period", "end_period")}
                item["segments"] = []
                items[ikey] = item
                report["items"].append(item)
            if r.get("segment_label") is not None:
                item["segments"].append(
                    {
                        "label": r["segment_label"],
                        "type": r.get("segment_type"),
                        **{k: r.get(k) for k in _MEMBER_EXTRAS},
                    }
                )
        return out


class LineItems(Shape):
    """Statement segments: ``{line_item: {product|segment: [{label, value}]}}`` per report <-> one row per value."""

    name = "line_items"
    rows_are_records = False
    _ROW = ("line_item", "category", "label", "value", *_MEMBER_EXTRAS)

    def _header(self) -> list[str]:
        return [f for f in fields_of("segmented_financials") if f not in self._ROW]

    def flatten(self, records: Sequence[Mapping[str, Any]]) -> list[Record]:  # noqa: D102
        header = set(SCHEMAS["segmented_financials"])
        rows = []
        for rep in records:
            head = {k: v for k, v in rep.items() if k in header}
            for line_item, cats in rep.items():
                if line_item in header or not isinstance(cats, dict):
                    continue
                for category, entries in cats.items():
                    if not isinstance(entries, list):  # a field beside the breakdowns (a note, an object): not one
                        continue
                    for e in entries:
                        if not isinstance(e, dict):
                            continue
                        rows.append(
                            {
                                **head,
                                "line_item": line_item,
                                "category": category,
                                "label": e.get("label"),
                                "value": e.get("value"),
                                **{k: e.get(k) for k in _MEMBER_EXTRAS},
                            }
                        )
        return rows

    def nest(self, rows: Sequence[Mapping[str, Any]]) -> list[Record]:  # noqa: D102
        out: list[Record] = []
        index: dict[tuple[Any, ...], Record] = {}
        for r in rows:
            key = (r["ticker"], r["report_period"], r["period"])
            rec = index.get(key)
            if rec is None:
                rec = self._report(r)
                index[key] = rec
                out.append(rec)
            cat = self._line_items_of(rec, r).setdefault(r["line_item"], {"product": [], "segment": []})
            cat.setdefault(r["category"], []).append(
                {"label": r["label"], "value": r["value"], **{k: r.get(k) for k in _MEMBER_EXTRAS}}
            )
        return out

    def _report(self, row: Mapping[str, Any]) -> Record:
        """A new report: the header of its first row."""
        return {k: row.get(k) for k in self._header()}

    def _line_items_of(self, report: Record, row: Mapping[str, Any]) -> Record:
        """Where a row's line item goes in its report (the report itself: one statement)."""
        return report

    def row_fields(self) -> list[str]:
        """The lake columns a report is nested from, header first."""
        return [*self._header(), *self._ROW]

    def record_schema(self, schema: str, flat: RecordSchema, drop: tuple[str, ...] = ()) -> JsonSchema:  # noqa: D102
        base = flat("segmented_financials", drop=drop + self._ROW)
        entries = {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "label": {"type": "string"},
                    "value": {"type": ["number", "null"]},
                    **MEMBER_EXTRAS_SCHEMA,
                },
            },
        }
        base["additionalProperties"] = {
            "type": ["object", "null"],
            "properties": {"product": entries, "segment": entries},
        }
        return base


_STATEMENT_KEYS = ("income_statement", "balance_sheet", "cash_flow_statement")
#: the line items the service documents per statement's segments: a report without one answers it as null
SEGMENT_LINE_ITEMS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "income_statement": ("revenue", "operating_income", "depreciation"),
        "balance_sheet": ("assets", "goodwill", "long_lived_assets"),
        "cash_flow_statement": ("capital_expenditure",),
    }
)


class StatementLineItems(LineItems):
    """All statements' segments: ``{statement: {line_item: {product|segment: [...]}}}`` per report <-> rows."""

    name = "statement_line_items"

    def flatten(self, records: Sequence[Mapping[str, Any]]) -> list[Record]:  # noqa: D102
        header = set(SCHEMAS["segmented_financials"])
        rows = []
        for rep in records:
            head = {k: v for k, v in rep.items() if k in header}
            for statement in _STATEMENT_KEYS:
                inner = rep.get(statement)
                if isinstance(inner, dict):
                    rows += [{**r, "statement": statement} for r in super().flatten([{**head, **inner}])]
        return rows

    def _report(self, row: Mapping[str, Any]) -> Record:
        return {**super()._report(row), **{s: None for s in _STATEMENT_KEYS}}

    def _line_items_of(self, report: Record, row: Mapping[str, Any]) -> Record:
        if report.get(row["statement"]) is None:
            report[row["statement"]] = {}
        return report[row["statement"]]

    def _header(self) -> list[str]:
        return [f for f in super()._header() if f != "statement"]

    def row_fields(self) -> list[str]:  # noqa: D102
        return [*super().row_fields(), "statement"]

    def record_schema(self, schema: str, flat: RecordSchema, drop: tuple[str, ...] = ()) -> JsonSchema:  # noqa: D102
        base = super().record_schema(schema, flat, drop + ("statement",))
        inner = {"type": ["object", "null"], "additionalProperties": base.pop("additionalProperties")}
        base["properties"].update({s: inner for s in _STATEMENT_KEYS})
        return base


_BUNDLE = ("income_statements", "balance_sheets", "cash_flow_statements")


class StatementBundle(Shape):
    """``{income_statements: [...], balance_sheets: [...], cash_flow_statements: [...]}`` <-> wide rows."""

    name = "statement_bundle"
    rows_are_records = False

    def flatten(self, records: Sequence[Mapping[str, Any]]) -> list[Record]:  # noqa: D102
        rows: dict[tuple[Any, ...], Record] = {}
        for bundle in records:
            for key in _BUNDLE:
                for rec in bundle.get(key) or []:
                    row = rows.setdefault((rec.get("ticker"), rec.get("report_period"), rec.get("period")), {})
                    for field, value in rec.items():
                        row.setdefault(field, value)  # the income statement's value wins (net income, header)
        return list(rows.values())

    def nest(self, rows: Sequence[Mapping[str, Any]]) -> list[Record]:  # noqa: D102
        return [{key: [{f: r.get(f) for f in SCHEMAS[key] if f in r} for r in rows] for key in _BUNDLE}]

    def record_schema(self, schema: str, flat: RecordSchema, drop: tuple[str, ...] = ()) -> JsonSchema:  # noqa: D102
        return {"type": "object", "properties": {k: {"type": "array", "items": flat(k, drop=drop)} for k in _BUNDLE}}


class IndexFunds(Shape):
    """``/index-funds`` answers <-> rows of (fund, held ticker) with the fund's header and the position.

    The answer is a fund's ``holdings`` (``ticker=``) or the ``funds`` holding a security (``holding=``).
    """

    name = "index_funds"
    fills_ticker = False
    rows_are_records = True  # (one holding, or one fund, a row: the header repeats on each)
    _POSITION = ("asset_class", "as_of", "filing_date", "weight", "market_value", "shares")

    def payload(self, body: Mapping[str, Any], key: str) -> Any:  # noqa: D102
        if isinstance(body.get("holdings"), list):
            fund = body.get("fund") or {}
            head = {
                "fund": body.get("ticker") or fund.get("ticker"),
                "fund_name": fund.get("name"),
                "fund_cik": fund.get("cik"),
                "as_of": fund.get("as_of"),
                "filing_date": fund.get("filing_date"),
                "source": fund.get("source"),
                "total_net_assets": fund.get("total_net_assets"),
            }
            return [{**head, **h} for h in body["holdings"]]
        if isinstance(body.get("funds"), list):
            sec = body.get("security") or {}
            held = {"ticker": body.get("holding") or sec.get("ticker"), "name": sec.get("name")}
            return [
                {
                    "fund": f.get("ticker"),
                    "fund_name": f.get("name"),
                    "fund_cik": f.get("cik"),
                    **held,
                    **{k: f.get(k) for k in self._POSITION},
                }
                for f in body["funds"]
            ]
        return None

    def wrapper_keys(self, key: str) -> tuple[str, ...]:  # noqa: D102
        return ("holdings", "funds")


_NODE_FIELDS = ("label", "full_label", "value", "parent")


class AsReported(Shape):
    """As-reported reports <-> one row per line item, with its ``statement`` and its ``parent`` label.

    A report is a header and a tree of ``{label, full_label, value, children}`` line items, for one statement
    (``line_items``) or three (``income_statement: {line_items}`` ...); rows keep the face order, depth first.
    """

    rows_are_records = False

    def __init__(self, bundle: bool) -> None:
        self.bundle = bundle
        self.name = "as_reported_bundle" if bundle else "as_reported"

    def flatten(self, records: Sequence[Mapping[str, Any]]) -> list[Record]:  # noqa: D102
        rows: list[Record] = []

        def walk(head: Record, nodes: Any, parent: str | None) -> None:
            for n in nodes or []:
                rows.append(
                    {
                        **head,
                        "label": n.get("label"),
                        "full_label": n.get("full_label"),
                        "value": n.get("value"),
                        "parent": parent,
                    }
                )
                walk(head, n.get("children"), n.get("label"))

        for rep in records:
            head = {k: v for k, v in rep.items() if k != "line_items" and k not in _STATEMENT_KEYS}
            if "line_items" in rep:
                walk(head, rep["line_items"], None)
            for statement in _STATEMENT_KEYS:
                if isinstance(rep.get(statement), dict):
                    walk({**head, "statement": statement}, rep[statement].get("line_items"), None)
        return rows

    def nest(self, rows: Sequence[Mapping[str, Any]]) -> list[Record]:
        """Rows -> reports with flat line items (a row's ``parent`` is not rebuilt into ``children``)."""
        out: list[Record] = []
        index: dict[tuple[Any, ...], Record] = {}
        for r in rows:
            key = (r.get("ticker"), r.get("report_period"), r.get("period"))
            rec = index.get(key)
            if rec is None:
                rec = {k: v for k, v in r.items() if k not in (*_NODE_FIELDS, "statement")}
                index[key] = rec
                out.append(rec)
            node: Record = {
                "label": r.get("label"),
                "full_label": r.get("full_label"),
                "value": r.get("value"),
                "children": [],
            }
            if self.bundle:
                rec.setdefault(str(r.get("statement")), {"line_items": []})["line_items"].append(node)
            else:
                rec.setdefault("line_items", []).append(node)
        return out

    def record_schema(self, schema: str, flat: RecordSchema, drop: tuple[str, ...] = ()) -> JsonSchema:  # noqa: D102
        base = flat("as_reported", drop=drop + _NODE_FIELDS + ("statement",))
        node: JsonSchema = {
            "type": "object",
            "properties": {
                "label": {"type": ["string", "null"]},
                "full_label": {"type": ["string", "null"]},
                "value": {"type": ["number", "null"]},
                "children": {"type": "array", "items": {"type": "object"}},
            },
        }
        items = {"type": "array", "items": node}
        if self.bundle:
            for s in _STATEMENT_KEYS:
                base["properties"][s] = {"type": ["object", "null"], "properties": {"line_items": items}}
        else:
            base["properties"]["line_items"] = items
        return base


#: every shape, by the name the catalog uses
SHAPES: Mapping[str, Shape] = MappingProxyType(
    {
        s.name: s
        for s in (
            Shape(),
            PrefixedObjects(omit_null=_EARNINGS_OPTIONAL),
            SegmentItems(),
            LineItems(),
            StatementLineItems(),
            StatementBundle(),
            IndexFunds(),
            AsReported(bundle=False),
            AsReported(bundle=True),
        )
    }
)
