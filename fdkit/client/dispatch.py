"""What every dataset function does: check its parameters, fan a ticker list out, fetch, build the typed frame.

The functions themselves (``fdkit.prices``, ``Client.balance_sheets``, ...) are generated from the catalog into
:mod:`fdkit.api` and :mod:`fdkit.client.methods` with real signatures; each is one line that hands its client to
:func:`call`. Nothing here creates a client: it is always handed one.

Example:
    >>> import fdkit
    >>> df = call(fdkit.Client(), "company_facts", {"ticker": ["AAPL", "NVDA"]})
    >>> df.index.tolist(), df.attrs["missing"]
    (['AAPL', 'NVDA'], {})
"""

from __future__ import annotations

import datetime
import difflib
import gc
import re
from collections.abc import Mapping
from datetime import date
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa

from fdkit.catalog.endpoints import CATALOG, Endpoint, Param
from fdkit.catalog.params import RANGE_CHECKED, ParamError, check_range, split_value, validate_value
from fdkit.catalog.shapes import SHAPES
from fdkit.client.bulk import fetch_pieces, uses_bulk
from fdkit.client.parts import fetch_part
from fdkit.errors import (
    BadRequestError,
    DateRangeWarning,
    NotFoundError,
    TruncatedWarning,
    redact,
    suggest,
    warn_user,
)
from fdkit.frames.memory import collection_paused
from fdkit.frames.pointintime import attach_filing_times
from fdkit.frames.runs import Piece, Run, as_part, grouped, piece_rows
from fdkit.frames.typed import frame_from_parts, to_frame

if TYPE_CHECKING:
    from fdkit.client.session import Client

__all__ = ["call", "check_value", "DEFAULTS", "DateLike", "Errors", "MISSING_ATTR"]

#: what a ticker list does with a failed ticker: raise the first failure, or warn / ignore and skip it
Errors = Literal["raise", "warn", "ignore"]
#: a date parameter: ``"YYYY-MM-DD"``, a ``datetime.date`` (``pandas.Timestamp`` is one) or a ``numpy.datetime64``
DateLike = str | datetime.date | np.datetime64

#: the ``DataFrame.attrs`` key under which a frame names what it lacks: ``{ticker: "why"}`` (str -> str, so JSON)
MISSING_ATTR = "missing"

#: values the dataset functions assume for parameters the service requires (``Param.client_default``)
DEFAULTS: dict[str, dict[str, Any]] = {
    ep.name: {p.name: p.client_default for p in ep.params if p.client_default is not None} for ep in CATALOG.values()
}

_LISTS = (list, tuple, set, pd.Index, pd.Series, np.ndarray)


#: parts of at least this many bytes in all: once the frame is built, the memory they held is handed back to the
#: operating system (pyarrow's pool over malloc keeps it otherwise: a 1,000-ticker panel's process held 3.4x the
#: frame's numbers, 1.1-1.6x after; benchmarks/client_panel.py)
_RELEASE_AFTER = 32 * 2**20


def _normalise(value: Any) -> Any:
    """Dates of any kind as ``YYYY-MM-DD``; numpy scalars as Python values."""
    if isinstance(value, np.datetime64):
        value = pd.Timestamp(value)
    if isinstance(value, pd.Timestamp | date):
        return value.isoformat()[:10]
    if isinstance(value, np.generic):
        return value.item()
    return value


def call(
    client: Client,
    name: str,
    params: Mapping[str, Any],
    *,
    raw: bool = False,
    errors: Errors = "raise",
    progress: bool | None = None,
    unknown: Mapping[str, Any] | None = None,
    as_of: Any = None,
) -> Any:
    """Fetch one dataset for one ticker or many and return its typed frame (or the JSON with ``raw=True``).

    Args:
        client: the client that fetches (the generated functions hand it over: their own, or the default).
        name: the endpoint's name in the catalog.
        params: the service's parameters (``None`` values are left out); the ticker parameter may be a list.
        raw: return the decoded JSON (a list of bodies for a list of tickers).
        errors: for a list of tickers: ``raise`` the first failure, or ``warn``/``ignore`` and skip it.
        progress: progress bars (default: on a terminal or in Jupyter, for calls over half a second).
        unknown: keywords the function does not have (a typo): refused, naming the valid parameters.
        as_of: point in time: sent as ``filing_date_lte`` (unless that is given) and applied to the frame's
            ``filing_date`` too, so a service that ignores the filter gives the same rows.

    Returns:
        The frame, or JSON with ``raw=True``. Every frame carries ``df.attrs["missing"]``: the requests it lacks,
        ``{ticker: "the error, one line"}`` (plain strings, so ``to_parquet``, which writes ``attrs`` as JSON, keeps
        it), whatever ``errors`` was; an empty dict when nothing was dropped (with ``errors="raise"`` a failure
        raises, so it is always empty). ``pd.concat`` keeps it only where every frame has the same.

    Raises:
        BadRequestError: before anything is sent, naming the parameter: an unknown or missing one, a value of the
            wrong type (``limit="10"``, a date not ``YYYY-MM-DD``), two that exclude each other (``ticker`` and
            ``cik``), or an empty ticker list.

    Example:
        >>> import fdkit
        >>> df = call(fdkit.Client(), "company_facts", {"ticker": ["AAPL", "NOPE"]}, errors="ignore")
        >>> df.index.tolist(), list(df.attrs["missing"])
        (['AAPL'], ['NOPE'])
    """
    ep = CATALOG[name]
    if unknown:
        wrong = next(iter(unknown))
        raise BadRequestError(
            f"{ep.path} has no parameter {', '.join(map(repr, unknown))}; {suggest(wrong, ep.param_names, most=20)}",
            error="Invalid parameter",
            path=ep.path,
        )
    merged: dict[str, Any] = dict(DEFAULTS.get(ep.name, {}))
    merged.update({k: v for k, v in params.items() if v is not None})
    if as_of is not None:
        as_of = pd.Timestamp(_normalise(as_of))
        merged.setdefault("filing_date_lte", as_of.strftime("%Y-%m-%d"))
    counted = _limit_plan(ep, params, merged)
    fan = ep.ticker_param
    clean = {
        k: ([_normalise(x) for x in v] if k != fan and isinstance(v, list) else _normalise(v))
        for k, v in merged.items()
    }
    _check_params(ep, clean, given={k for k, v in params.items() if v is not None})
    # every mistake visible in the arguments is named before the service is asked anything (its probe included)
    missing = [p.name for p in ep.params if p.required and p.name not in clean]
    if missing:
        raise BadRequestError(
            f"{ep.name}() needs {', '.join(map(repr, missing))}", error="Missing parameter", path=ep.path
        )
    many = fan is not None and isinstance(clean.get(fan), _LISTS)
    keys = list(dict.fromkeys(str(t).strip().upper() for t in clean[fan])) if many else []  # type: ignore[index]
    if many and not keys:
        raise BadRequestError(f"{ep.name}(): the list of {fan}s is empty", path=ep.path)
    for key in keys if many else [clean.get(fan)] if fan is not None else []:
        _check_ticker(ep, str(fan), key)
    # one deadline until the service first answers: a probe of it and the first requests share the call's
    with client.call_scope():
        cut = None  # a bar limit the service's document lacks: applied to the frame instead of sent
        if any(k in ep.extension_params for k in clean) and not client.speaks_fdkit():
            if ep.time_index and "limit" in ep.extension_params and isinstance(clean.get("limit"), int):
                cut = clean.pop("limit")
            clean = _documented_only(ep, clean, given={k for k, v in params.items() if v is not None})
        requests_ = [{**clean, fan: k} for k in keys] if many else [clean]
        try:
            out = _fetch_frame(
                client,
                ep,
                requests_,
                clean,
                params,
                counted,
                many=many,
                raw=raw,
                errors=errors,
                progress=progress,
                as_of=as_of,
            )
        except NotFoundError as exc:
            raise _with_ticker_hint(exc, [str(q.get(fan)) for q in requests_] if fan else []) from None
    if cut is not None and isinstance(out, pd.DataFrame) and len(out):
        out = out[(out.groupby(level=0, observed=True).cumcount() < cut).to_numpy()]
    return out


def _fetch_frame(
    client: Client,
    ep: Endpoint,
    requests_: list[dict[str, Any]],
    clean: dict[str, Any],
    params: Mapping[str, Any],
    counted: int | None,
    *,
    many: bool,
    raw: bool,
    errors: Errors,
    progress: bool | None,
    as_of: Any,
) -> Any:
    """Fetch the requests and assemble the frame (or the JSON with ``raw=True``)."""
    fan = ep.ticker_param
    if raw or ep.kind == "search":
        ok, failed = client.fetch_many(ep, requests_, errors=errors, progress=progress)
        if counted is not None:
            ok = [(q, _trimmed_body(ep, body, counted)) for q, body in ok]
        if raw:
            bodies = [body for _, body in ok]
            return bodies if many else (bodies[0] if bodies else None)
        frame = to_frame(ep, ok) if ok else to_frame(ep, [(clean, {})])
        return _named_missing(attach_filing_times(_known_by(frame, as_of)), failed)
    # typed parts: a warm request is read back as Arrow, with no JSON decode
    got: list[tuple[Mapping[str, Any], Piece]]
    if many and uses_bulk(client, ep, len(requests_)):  # a peer: the tickers the cache lacks in a few bulk requests
        with collection_paused():
            got, failed = fetch_pieces(client, ep, requests_, errors=errors, progress=progress)
    else:
        got, failed = client.fetch_many(
            ep, requests_, errors=errors, progress=progress, fetch=lambda p: fetch_part(client, ep, p)
        )
    parts = [part for _, part in got]
    if counted is not None:
        parts = _trimmed_parts(ep, got, counted, fan)
    elif "limit" in ep.param_names and "limit" in params and params["limit"] is None:
        _warn_capped(ep, got, fan)
    asked = [str(q.get(fan)) for q, _ in got] if fan else []
    # about the parts' bytes (a buffer-size sum per part was 0.1 s of a 3,000-part statement panel)
    width = as_part(parts[0])[0].num_columns if parts else 0
    big = sum(piece_rows(part) for part in parts) * width * 8 >= _RELEASE_AFTER
    del got  # the parts are held by `pieces` alone, which the frame consumes: each is freed once its rows are copied
    pieces = grouped(parts)  # a shared table's runs: read in a few stretches, never cut per ticker
    del parts
    with collection_paused():  # (the parts stay locals of this function alone: `del` frees them)
        frame = frame_from_parts(ep, pieces, clean, consume=True)
    del pieces
    _warn_outside_data(ep, frame, clean, asked, many=many)
    result = _named_missing(attach_filing_times(_known_by(frame, as_of)), failed)
    if big:  # hand the freed memory back to the OS: a panel's RSS is then about its frame, not the parts' too
        del frame
        gc.collect()
        pa.default_memory_pool().release_unused()
    return result


def _check_ticker(ep: Endpoint, fan: str, value: Any) -> None:
    """Several tickers in one string are refused before anything is sent, with the list spelling."""
    if not isinstance(value, str) or not _SEVERAL.search(value):
        return
    parts = [t for t in re.split(r"[\s,;]+", value.strip()) if t]
    if len(parts) > 1:
        listed = "[" + ", ".join(repr(t.upper()) for t in parts) + "]"
        raise BadRequestError(
            f"{ep.name}(): {fan}={value!r} looks like {len(parts)} {fan}s in one string: pass a list, "
            f"{ep.name}({listed}, ...) (fdkit get {ep.name} {' '.join(t.upper() for t in parts)})",
            error="Invalid parameter",
            path=ep.path,
        )


#: a separator between two symbols of one string (``"AAPL,MSFT"``, ``"AAPL MSFT"``)
_SEVERAL = re.compile(r"\S[\s,;]+\S")


def _with_ticker_hint(exc: NotFoundError, tickers: list[str]) -> NotFoundError:
    """A class share spelled with a dot (``BRK.B``) that was not found: name the dash spelling the service uses."""
    dotted = [t for t in tickers if "." in t and t in exc.message]
    if not dotted:
        return exc
    hint = ", ".join(f"{t!r} -> {t.replace('.', '-')!r}" for t in dotted)
    said = NotFoundError(
        f"{exc.message}; share classes are spelled with a dash: {hint}",
        status=exc.status,
        error=exc.error,
        path=exc.path,
        body=exc.body,
    )
    said.next_step = exc.next_step
    return said


#: how far the first or last bar may lie from the dates asked before a DateRangeWarning (holidays, thin trading)
_SLACK = pd.Timedelta(days=31)


def _warn_outside_data(
    ep: Endpoint, frame: pd.DataFrame, clean: Mapping[str, Any], tickers: list[str], *, many: bool
) -> None:
    """Bars asked for where the data has none: one warning.

    For one ticker: no bars in the range, or its first bar a month after ``start_date`` or its last a month before
    a past ``end_date`` (unless a ``limit`` cut the range). For several: only when none has a bar in the range (a
    universe's members have histories of their own lengths).
    """
    if ep.time_index is None or not clean.get("start_date") or not tickers or (many and len(frame)):
        return  # several tickers: only when none has a bar (every row is one), so no spans to compute
    start, end = pd.Timestamp(str(clean["start_date"])), pd.Timestamp(str(clean.get("end_date") or "2262-01-01"))
    today = pd.Timestamp.today().normalize()
    times = frame.index.get_level_values(ep.time_index) if ep.time_index in frame.index.names else None
    if times is None or "ticker" not in frame.index.names:
        return
    times = pd.DatetimeIndex(times)
    if times.tz is not None:
        times = times.tz_convert(None)
    spans = pd.Series(times, index=frame.index.get_level_values("ticker")).groupby(level=0).agg(["min", "max"])
    if many and len(spans):
        return
    said = []
    for t in (str(t).upper() for t in tickers):  # a ticker as typed ('aapl') is the service's 'AAPL'
        if t not in spans.index:
            said.append(f"{t} has no bars from {start:%Y-%m-%d} to {end:%Y-%m-%d}")
            continue
        if "limit" in clean:
            continue
        first, last = pd.Timestamp(str(spans.at[t, "min"])), pd.Timestamp(str(spans.at[t, "max"]))
        if first - start > _SLACK:
            said.append(f"{t}'s bars start on {first:%Y-%m-%d}, after the start_date asked ({start:%Y-%m-%d})")
        if end - last > _SLACK and end <= today:
            said.append(f"{t}'s bars end on {last:%Y-%m-%d}, before the end_date asked ({end:%Y-%m-%d})")
    if said:
        more = f" and {len(said) - 5} more" if len(said) > 5 else ""
        warn_user(f"{ep.name}(): dates outside the data: {'; '.join(said[:5])}{more}", DateRangeWarning)


def _named_missing(df: pd.DataFrame, failed: Mapping[str, Exception]) -> pd.DataFrame:
    """Name in ``df.attrs["missing"]`` the requests a frame lacks and why (one line each, never the key)."""
    df.attrs[MISSING_ATTR] = {str(who): redact(" ".join(str(exc).split())) for who, exc in failed.items()}
    return df


_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def check_value(ep: Endpoint, name: str, value: Any) -> None:
    """Refuse a value the service would refuse for its type, before anything is sent (an integer, a date).

    Args:
        ep: the endpoint.
        name: one of its parameters.
        value: the value as it would be sent (dates already ``YYYY-MM-DD`` text).

    Raises:
        BadRequestError: naming the parameter, the value and what it must be.

    Example:
        >>> from fdkit.catalog.endpoints import get
        >>> try:
        ...     check_value(get("news"), "limit", "10")
        ... except BadRequestError as exc:
        ...     print(exc.message)
        news(): limit must be an integer, got '10' (a str): pass limit=10
    """
    p = ep.param(name)
    problem = _problem(p, value) or _refused(ep, p, value)
    if problem:
        raise BadRequestError(f"{ep.name}(): {problem}", error="Invalid parameter", path=ep.path)


#: the parameter types whose values the service's own rules (:mod:`fdkit.catalog.params`) check one by one
_SCALARS = ("integer", "number", "boolean", "date", "string")


def _refused(ep: Endpoint, p: Param, value: Any) -> str | None:
    """What the service's validator would say of the value (each of a list's), in its words, or ``None``.

    Example:
        >>> from fdkit.catalog.endpoints import get
        >>> _refused(get("income_statements"), get("income_statements").param("period"), "anual")
        "'period' must be one of annual, quarterly, ttm; got 'anual' (did you mean 'annual'?)"
    """
    if p.type not in _SCALARS:
        return None
    values = list(value) if isinstance(value, _LISTS) and (p.repeatable or p.name == ep.ticker_param) else [value]
    if ep.method == "GET":  # what the query string carries: text, a repeatable value split as the service splits it
        values = [v if isinstance(v, bool) else str(v) for v in values]
        if p.repeatable:
            values = [part for v in values for part in split_value(p, str(v)) if part.strip()]
    for one in values:
        try:
            validate_value(ep, p.name, one)
        except ParamError as exc:
            close = difflib.get_close_matches(str(one).lower(), list(p.enum or ()), n=1, cutoff=0.7)
            return exc.message + (f" (did you mean {close[0]!r}?)" if close else "")
    return None


def _problem(p: Param, value: Any) -> str | None:
    if p.type == "integer" and (isinstance(value, bool) or not isinstance(value, int)):
        hint = f": pass {p.name}={int(value)}" if isinstance(value, str) and value.strip().isdigit() else ""
        if isinstance(value, str) and value.strip().lower() in _EVERY and p.name == "limit":
            hint = ": pass limit=None for every row"
        return f"{p.name} must be an integer, got {value!r} (a {type(value).__name__}){hint}"
    if p.type == "date":
        if isinstance(value, str) and _ISO_DATE.fullmatch(value):
            try:
                date.fromisoformat(value)
                return None
            except ValueError:
                return f"{p.name} is not a calendar date: {value!r}"
        return (
            f"{p.name} must be a date as YYYY-MM-DD (or a datetime.date, pandas.Timestamp or numpy.datetime64), "
            f"got {value!r}"
        )
    return None


_TICKER_LIKE = re.compile(r"[A-Z][A-Z0-9]{0,5}(?:[.-][A-Z]{1,2})?")
#: what a user may write for "every row" where the value must be a count
_EVERY = {"all", "none", "max", "*", "inf", "unlimited"}


def _ticker_slip(ep: Endpoint, clean: Mapping[str, Any]) -> None:
    """A ticker where another parameter's value goes (``prices('AAPL', 'MSFT', ...)``): refused with the list spelling.

    Example:
        >>> from fdkit.catalog.endpoints import get
        >>> try:
        ...     _ticker_slip(get("prices"), {"ticker": "AAPL", "interval": "MSFT"})
        ... except BadRequestError as exc:
        ...     print(exc.message)
        prices(): interval='MSFT' looks like a ticker: several tickers are one list, prices(['AAPL', 'MSFT'], ...)
    """
    fan = ep.ticker_param
    if not fan or not isinstance(clean.get(fan), str):
        return
    for name, value in clean.items():
        if name == fan or name not in ep.param_names or not isinstance(value, str) or not _TICKER_LIKE.fullmatch(value):
            continue
        p = ep.param(name)
        misplaced = p.type in ("integer", "date") or (p.enum and value.lower() not in {e.lower() for e in p.enum})
        if misplaced:
            listed = f"[{clean[fan].upper()!r}, {value!r}]"
            raise BadRequestError(
                f"{ep.name}(): {name}={value!r} looks like a ticker: several {fan}s are one list, "
                f"{ep.name}({listed}, ...)",
                error="Invalid parameter",
                path=ep.path,
            )


def _check_params(ep: Endpoint, clean: Mapping[str, Any], given: set[str]) -> None:
    """Every value of its type, and no two parameters that exclude each other (naming where a value went)."""
    fan = ep.ticker_param
    _ticker_slip(ep, clean)
    for name, value in clean.items():
        if name in ep.param_names and not (name == fan and isinstance(value, _LISTS)):
            check_value(ep, name, value)
        elif name == fan and (odd := [t for t in value if not isinstance(t, str)]):
            # a list's strings are each their own request (one the service refuses is that ticker's failure)
            raise BadRequestError(
                f"{ep.name}(): every {fan} of a list is a string; got {odd[0]!r} (a {type(odd[0]).__name__})",
                error="Invalid parameter",
                path=ep.path,
            )
    try:
        if ep.name in RANGE_CHECKED:
            check_range(clean)
    except ParamError as exc:
        raise BadRequestError(f"{ep.name}(): {exc.message}", error="Invalid parameter", path=ep.path) from None
    for group in ep.exclusive:
        both = [n for n in group if clean.get(n) is not None]
        if len(both) > 1:
            raise BadRequestError(_conflict(ep, both, clean, given), error="Conflicting parameters", path=ep.path)


def _conflict(ep: Endpoint, both: list[str], clean: Mapping[str, Any], given: set[str]) -> str:
    """``give only one of ...``, and where a value plainly meant for another parameter went (a positional slip)."""
    shown = " and ".join(f"{n}={clean[n]!r}" for n in both)
    text = f"{ep.name}() got {shown}: give only one of {' or '.join(both)}"
    for name in both:
        value = clean[name]
        if not isinstance(value, str) or ep.param(name).enum:
            continue
        meant = [
            p.name for p in ep.params if p.enum and p.name not in given and value.lower() in {e.lower() for e in p.enum}
        ]
        if meant:
            text += (
                f"; {value!r} went to {name}, but it is a value of {meant[0]}: pass {meant[0]}={value!r} by name "
                f"({name} comes before {meant[0]} in the function's parameters)"
            )
    return text


def _documented_only(ep: Endpoint, clean: dict[str, Any], given: set[str]) -> dict[str, Any]:
    """The request as the service's document allows it (a service that is not fdkit's own).

    What fdkit added itself is left out (``as_of``'s ``filing_date_lte``: the frame is filtered by it anyway; a
    bar ``limit``, cut from the frame by the caller); any other extension the caller asked for is refused.
    """
    assumed = DEFAULTS.get(ep.name, {})  # a function's own default is not a request (``adjusted=True``)
    asked = [
        k for k in clean if k in ep.extension_params and k in given and not (k in assumed and clean[k] == assumed[k])
    ]
    if asked:
        raise BadRequestError(
            f"{ep.name}(): {', '.join(asked)} {'is an fdkit extension' if len(asked) == 1 else 'are fdkit extensions'}"
            f" of {ep.path} that the service's document does not list, so fdkit does not send "
            f"{'it' if len(asked) == 1 else 'them'} to this service; fdkit serve (or the embedded default, with no "
            "key and no base URL) answers them",
            error="Invalid parameter",
            path=ep.path,
        )
    return {k: v for k, v in clean.items() if k not in ep.extension_params}


def _known_by(df: pd.DataFrame, as_of: pd.Timestamp | None) -> pd.DataFrame:
    """Rows filed after ``as_of``, or without a filing date, left out (the service's filter, checked again here)."""
    if as_of is None or "filing_date" not in df.columns:
        return df
    return df[(df["filing_date"] <= as_of).fillna(False).to_numpy(dtype=bool)]


#: ``limit=None``: as many records as the service gives for one request (an integer the service accepts)
_EVERYTHING = 2**31 - 1


def _limit_plan(ep: Endpoint, params: Mapping[str, Any], merged: dict[str, Any]) -> int | None:
    """Turn the ``limit`` argument into the wire's; return the default to trim to when one extra is asked for.

    ``"default"`` (or no ``limit`` keyword): the endpoint's default number of records, asking one more to learn
    whether more exist; ``None``: everything (the largest limit the endpoint takes); an integer: that many.
    """
    if "limit" not in ep.param_names:
        return None
    given = params.get("limit", "default")
    if given == "default":
        default = ep.finite_default
        if default is None:  # bars: no limit means the whole date range (window by window)
            merged.pop("limit", None)
            return None
        cap = ep.param("limit").max
        if cap is not None and default >= cap:  # no room to ask for one more
            merged["limit"] = default
            return None
        merged["limit"] = default + 1
        return default
    if given is None and ep.finite_default is not None:
        cap = ep.param("limit").max
        merged["limit"] = cap if cap is not None else _EVERYTHING
    return None


def _trimmed_parts(ep: Endpoint, ok: list, default: int, fan: str | None) -> list:
    """Each request's part cut to ``default`` rows; one TruncatedWarning naming the requests that had more."""
    out: list[Piece] = []
    more: list[str] = []
    keys = [k for k in ep.index if k != fan]  # a record's key among the rows (a nested record spans several)
    rows = SHAPES[ep.shape].rows_are_records  # (index funds: a holding a row, though the fund is not the fan)
    for params, piece in ok:
        if isinstance(piece, Run) and (rows or not keys):  # its first rows, as a part's slice
            if piece.rows > default:
                piece = piece._replace(rows=default)
                more.append(str(params.get(fan, "")) if fan else "")
            out.append(piece)
            continue
        table, n, consts = as_part(piece)
        if rows or not keys or not set(keys) <= set(table.column_names):
            if n > default:
                table, n = table.slice(0, default), default
                more.append(str(params.get(fan, "")) if fan else "")
        elif table.num_rows:
            record = table.select(keys).to_pandas().astype(str).agg("|".join, axis=1)
            order = pd.Index(record.unique())
            if len(order) > default:
                keep = record.isin(order[:default]).to_numpy()
                table = table.filter(keep)
                n = int(keep.sum())
                more.append(str(params.get(fan, "")) if fan else "")
        out.append((table, n, consts))
    if more:
        _warn_truncated(ep, default, more)
    return out


def _trimmed_body(ep: Endpoint, body: Any, default: int) -> Any:
    records = body.get(ep.response_key) if isinstance(body, dict) else None  # (records, however nested)
    if isinstance(records, list) and len(records) > default:
        _warn_truncated(ep, default, [""])
        return {**body, ep.response_key: records[:default]}
    return body


def _warn_truncated(ep: Endpoint, default: int, which: list[str]) -> None:
    named = [w for w in which if w]
    whose = f" for {', '.join(named[:10])}{' and more' if len(named) > 10 else ''}" if named else ""
    warn_user(
        f"{ep.name}() returned the default {default} record{'s' if default != 1 else ''}{whose}, and more exist: "
        f"pass limit=None for all of them, or a larger limit (fdkit get {ep.name}: --limit all, or --limit N)",
        TruncatedWarning,
    )


def _warn_capped(ep: Endpoint, ok: list, fan: str | None) -> None:
    if ep.time_index and ep.finite_default is None:  # bars: a range past one request's cap is continued by dates
        return
    cap = ep.param("limit").max
    full = [str(p.get(fan, "")) for p, piece in ok if cap is not None and piece_rows(piece) >= cap]
    if full:
        warn_user(
            f"{ep.name}() returned the service's maximum of {cap} records per request"
            f"{' for ' + ', '.join(full[:10]) if fan else ''}; narrow the query (dates) to get the rest "
            f"(fdkit get {ep.name}: --start-date/--end-date, or the filters in --help)",
            TruncatedWarning,
        )
