"""Validate request parameters against the catalog: every problem is a :class:`ParamError` (HTTP 400).

The service validates every request with these rules, and fdkit's client checks the values it is about to send with
the same ones (:func:`validate_value`, :func:`check_range`), so a mistake visible locally is named before any
request, in the words the service would use.

The validated query is JSON-friendly (dates stay ``YYYY-MM-DD`` strings, which compare correctly), so it can be
bound into a pagination cursor as is.

Example:
    >>> from fdkit.catalog import get
    >>> validate_query(get("prices"), [("ticker", "AAPL"), ("interval", "day"),
    ...     ("start_date", "2024-01-02"), ("end_date", "2024-01-31")])["limit"]
    5000
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from fdkit.catalog.endpoints import Endpoint, Param
from fdkit.errors import BadRequestError

__all__ = [
    "RANGE_CHECKED",
    "ParamError",
    "validate_query",
    "validate_body",
    "validate_value",
    "check_groups",
    "check_range",
    "split_value",
]

#: the endpoints whose date range the service refuses when it ends before it starts (the others answer it empty)
RANGE_CHECKED = frozenset({"prices", "crypto_prices"})

_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no"}
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_MAX_TEXT = 200


class ParamError(BadRequestError):
    """An invalid parameter (HTTP 400): a :class:`~fdkit.errors.BadRequestError` titled ``Invalid parameter``."""

    def __init__(self, message: str, error: str = "Invalid parameter", **kw: Any) -> None:
        super().__init__(message, error=error, **kw)


def _scalar(p: Param, raw: Any) -> Any:
    if p.type == "integer":
        if isinstance(raw, bool):
            raise ParamError(f"'{p.name}' must be an integer, got {raw!r}")
        if isinstance(raw, int):
            value = raw
        else:
            text = str(raw).strip()
            if not re.fullmatch(r"[+-]?\d{1,30}", text):
                raise ParamError(f"'{p.name}' must be an integer, got {_show(raw)}")
            value = int(text)
        return _bounds(p, value)
    if p.type == "number":
        try:
            number = float(raw)
        except (TypeError, ValueError):
            raise ParamError(f"'{p.name}' must be a number, got {_show(raw)}") from None
        if not math.isfinite(number):
            raise ParamError(f"'{p.name}' must be a finite number")
        _bounds(p, number)
        return number
    if p.type == "boolean":
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise ParamError(f"'{p.name}' must be true or false, got {_show(raw)}")
    if p.type == "date":
        text = str(raw).strip()
        if not _DATE.match(text):
            raise ParamError(f"'{p.name}' must be a date as YYYY-MM-DD, got {_show(raw)}")
        try:
            dt.date.fromisoformat(text)
        except ValueError:
            raise ParamError(f"'{p.name}' is not a valid date: {_show(raw)}") from None
        return text
    # string
    if not isinstance(raw, str):
        raise ParamError(f"'{p.name}' must be a string, got {_show(raw)}")
    text = raw.strip()
    if not text:
        raise ParamError(f"'{p.name}' must not be empty")
    if len(text) > _MAX_TEXT or any(ord(ch) < 32 for ch in text):
        raise ParamError(f"'{p.name}' is not a valid value: {_show(raw)}")
    if p.enum is not None:  # enum values are matched case-insensitively and answered in their canonical case
        canonical = {e.lower(): e for e in p.enum}.get(text.lower())
        if canonical is None:
            raise ParamError(f"'{p.name}' must be one of {', '.join(p.enum)}; got {_show(raw)}")
        return canonical
    if p.pattern is not None and not re.fullmatch(p.pattern, text, flags=re.ASCII):
        raise ParamError(f"'{p.name}' is not valid: {p.description.rstrip('.') or p.pattern}; got {_show(raw)}")
    return text


#: integers without a declared maximum still fit a 32-bit signed int (no overflow downstream, ever)
INT_CEILING = 2**31 - 1


def _bounds(p: Param, value: Any) -> Any:
    """The value, checked against the parameter's range; a ``limit`` above its maximum is clamped to it.

    Clients written for the real service send large limits (``limit=1000`` for news); they get every record the
    endpoint gives, not a 400. ``limit <= 0`` stays a 400.
    """
    if p.type == "integer" and abs(value) > INT_CEILING and (p.max is None or p.name != "limit"):
        raise ParamError(f"'{p.name}' is out of range, got {_num(value)}")
    if p.min is not None and value < p.min:
        raise ParamError(f"'{p.name}' must be >= {_num(p.min)}, got {_num(value)}")
    if p.max is not None and value > p.max:
        if p.name == "limit":
            return type(value)(p.max)
        raise ParamError(f"'{p.name}' must be <= {_num(p.max)}, got {_num(value)}")
    return value


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def _show(raw: Any) -> str:
    text = repr(raw)
    return text if len(text) <= 60 else text[:57] + "...'"


def split_value(p: Param, value: str) -> list[str]:
    """One query value of a repeatable parameter: kept whole when it is a value itself (``Part-1,Item-2``).

    Example:
        >>> from fdkit.catalog import get
        >>> split_value(get("filings").param("filing_type"), "10-K,10-Q")
        ['10-K', '10-Q']
    """
    if p.enum is not None and value.strip().lower() in {e.lower() for e in p.enum}:
        return [value]
    return value.split(",")


def check_groups(ep: Endpoint, values: Mapping[str, Any]) -> None:
    """Apply the endpoint's ``one_of`` / ``exclusive`` rules.

    Args:
        ep: the endpoint.
        values: validated values.

    Raises:
        ParamError: naming the parameters.
    """
    for group in ep.one_of:
        if not any(values.get(n) is not None for n in group):
            raise ParamError(f"one of {' or '.join(repr(n) for n in group)} is required", "Missing parameter")
    for group in ep.exclusive:
        given = [n for n in group if values.get(n) is not None]
        if len(given) > 1:
            raise ParamError(f"give only one of {' or '.join(repr(n) for n in given)}", "Conflicting parameters")


def check_range(values: Mapping[str, Any]) -> None:
    """Refuse a date range that ends before it starts (``start_date`` after ``end_date``).

    Args:
        values: the request's values, dates as ``YYYY-MM-DD`` text.

    Raises:
        ParamError: naming both dates.

    Example:
        >>> try:
        ...     check_range({"start_date": "2024-01-05", "end_date": "2024-01-02"})
        ... except ParamError as exc:
        ...     print(exc.message)
        start_date 2024-01-05 is after end_date 2024-01-02
    """
    start, end = values.get("start_date"), values.get("end_date")
    if isinstance(start, str) and isinstance(end, str) and start > end:
        raise ParamError(f"start_date {start} is after end_date {end}")


def validate_value(ep: Endpoint, name: str, raw: Any) -> Any:
    """One parameter's value, checked as :func:`validate_query` checks it (a bulk request's tickers, one by one).

    Raises:
        ParamError: for a value the parameter does not take.

    Example:
        >>> from fdkit.catalog import get
        >>> validate_value(get("prices"), "ticker", " AAPL ")
        'AAPL'
    """
    return _scalar(ep.param(name), raw)


def validate_query(
    ep: Endpoint,
    items: Iterable[tuple[str, str]],
    *,
    allow: Iterable[str] = (),
    ignored: list[str] | None = None,
) -> dict[str, Any]:
    """Validate a GET query string.

    Args:
        ep: the endpoint.
        items: ``(name, value)`` pairs as received (repeats allowed).
        allow: extra names tolerated (e.g. ``cursor``).
        ignored: where given, names the endpoint does not know are appended here and otherwise ignored (the
            service's behaviour: clients of the real API send extras); without it they are an error.

    Returns:
        Validated values with defaults filled in.

    Raises:
        ParamError: for unknown (without ``ignored``), repeated, missing or invalid parameters.
    """
    by_name = {p.name: p for p in ep.params}
    allowed = set(allow)
    seen: dict[str, list[str]] = {}
    for name, value in items:
        if name not in by_name and name not in allowed:
            if ignored is not None:
                if name not in ignored:
                    ignored.append(name)
                continue
            known = ", ".join(by_name) or "none"
            raise ParamError(f"unknown parameter {_show(name)}; {ep.path} accepts: {known}", "Unknown parameter")
        seen.setdefault(name, []).append(value)
    out: dict[str, Any] = {}
    for p in ep.params:
        raw = seen.get(p.name)
        if raw is None:
            if p.required:
                raise ParamError(f"'{p.name}' is required", "Missing parameter")
            if p.default is not None:
                out[p.name] = p.default
            continue
        if p.repeatable:  # repeated parameters are the list form; a comma splits only where no value has one
            vals = [v for chunk in raw for v in split_value(p, str(chunk)) if v.strip()]
            if not vals:
                raise ParamError(f"'{p.name}' must not be empty")
            out[p.name] = [_scalar(p, v) for v in vals]
        else:
            if len(raw) > 1:
                raise ParamError(f"'{p.name}' was given {len(raw)} times; give it once", "Repeated parameter")
            try:
                out[p.name] = _scalar(p, raw[0])
            except ParamError:
                # a listing documents no 400: a value it cannot use is ignored (and named), as an unknown name is
                if ep.kind != "listing" or ignored is None:
                    raise
                ignored.append(p.name)
                if p.default is not None:
                    out[p.name] = p.default
    for name in allowed:
        if name in seen:
            out[name] = seen[name][-1]
    check_groups(ep, out)
    return out


def validate_body(ep: Endpoint, body: Any, *, ignored: list[str] | None = None) -> dict[str, Any]:
    """Validate a POST JSON body (search endpoints); nested filters are checked by the handler.

    Args:
        ep: the endpoint.
        body: decoded JSON.
        ignored: where given, fields the endpoint does not know are appended here and otherwise ignored.

    Returns:
        Validated values with defaults.

    Raises:
        ParamError: for a non-object body, unknown (without ``ignored``), missing or invalid fields.
    """
    if not isinstance(body, dict):
        raise ParamError("the request body must be a JSON object", "Invalid body")
    by_name = {p.name: p for p in ep.params}
    unknown = [str(k) for k in body if k not in by_name]
    if unknown and ignored is None:
        raise ParamError(
            f"unknown field(s) {', '.join(map(_show, unknown))}; {ep.path} accepts: {', '.join(by_name)}",
            "Unknown field",
        )
    if ignored is not None:
        ignored.extend(k for k in unknown if k not in ignored)
    out: dict[str, Any] = {}
    for p in ep.params:
        if p.name not in body or body[p.name] is None:
            if p.required:
                raise ParamError(f"'{p.name}' is required", "Missing field")
            if p.default is not None:
                out[p.name] = p.default
            continue
        value = body[p.name]
        if p.type == "array":
            if not isinstance(value, list) or not value:
                raise ParamError(f"'{p.name}' must be a non-empty array")
            if p.items == "string":
                item = Param(p.name, "string")
                value = [_scalar(item, v) for v in value]
            out[p.name] = value
        else:
            out[p.name] = _scalar(p, value)
    return out
