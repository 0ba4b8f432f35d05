"""What every dataset function does: check its parameters, fan a ticker list out, fetch, build the typed frame.

The functions themselves (``fdkit.prices``, ``Client.balance_sheets``, ...) are generated from the catalog into
:mod:`fdkit.api` with real signatures; each is one line that calls :func:`call`.

Example:
    >>> df = call("company_facts", {"ticker": ["AAPL", "NVDA"]})
    >>> df.index.tolist()
    ['AAPL', 'NVDA']
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from .catalog import CATALOG
from .errors import BadRequestError, suggest
from .frames import fetch_part, frame_from_parts, to_frame

if TYPE_CHECKING:
    from .client import Client

__all__ = ["call", "DEFAULTS", "Errors"]

Errors = Literal["raise", "warn", "ignore"]

#: values the dataset functions assume for parameters the service requires (``Param.client_default``)
DEFAULTS: dict[str, dict[str, Any]] = {
    ep.name: {p.name: p.client_default for p in ep.params if p.client_default is not None} for ep in CATALOG.values()
}

_LISTS = (list, tuple, set, pd.Index, pd.Series, np.ndarray)


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
    name: str,
    params: Mapping[str, Any],
    *,
    raw: bool = False,
    errors: Errors = "raise",
    progress: bool | None = None,
    client: Client | None = None,
    unknown: Mapping[str, Any] | None = None,
) -> Any:
    """Fetch one dataset for one ticker or many and return its typed frame (or the JSON with ``raw=True``).

    Args:
        name: the endpoint's name in the catalog.
        params: the service's parameters (``None`` values are left out); the ticker parameter may be a list.
        raw: return the decoded JSON (a list of bodies for a list of tickers).
        errors: for a list of tickers: ``raise`` the first failure, or ``warn``/``ignore`` and skip it.
        progress: progress bars (default: only on a terminal).
        client: the client (default: :func:`fdkit.default_client`).
        unknown: keywords the function does not have (a typo): refused, naming the valid parameters.

    Returns:
        The frame, or JSON with ``raw=True``.

    Raises:
        BadRequestError: an unknown or missing parameter, or an empty ticker list.
    """
    from .client import default_client

    ep = CATALOG[name]
    if unknown:
        wrong = next(iter(unknown))
        raise BadRequestError(
            f"{ep.path} has no parameter {', '.join(map(repr, unknown))}; {suggest(wrong, ep.param_names, most=20)}",
            error="Invalid parameter",
            path=ep.path,
        )
    c = client or default_client()
    merged: dict[str, Any] = dict(DEFAULTS.get(ep.name, {}))
    merged.update({k: v for k, v in params.items() if v is not None})
    fan = ep.ticker_param
    clean = {k: ([_normalise(x) for x in v] if k != fan and isinstance(v, list) else _normalise(v))
             for k, v in merged.items()}  # fmt: skip
    missing = [p.name for p in ep.params if p.required and p.name not in clean]
    if missing:
        raise BadRequestError(f"{ep.name}() needs {', '.join(map(repr, missing))}", error="Missing parameter",
                              path=ep.path)  # fmt: skip
    many = fan is not None and isinstance(clean.get(fan), _LISTS)
    if many:
        keys = list(dict.fromkeys(str(t).upper() for t in clean[fan]))  # type: ignore[index]
        if not keys:
            raise BadRequestError(f"{ep.name}(): the list of {fan}s is empty", path=ep.path)
        requests_ = [{**clean, fan: k} for k in keys]
    else:
        requests_ = [clean]
    if raw or ep.kind == "search":
        ok, _failed = c.fetch_many(ep, requests_, errors=errors, progress=progress)
        if raw:
            bodies = [body for _, body in ok]
            return bodies if many else (bodies[0] if bodies else None)
        return to_frame(ep, ok) if ok else to_frame(ep, [(clean, {})])
    # typed parts: a warm request is read back as Arrow, with no JSON decode
    ok, _failed = c.fetch_many(ep, requests_, errors=errors, progress=progress,
                               fetch=lambda p: fetch_part(c, ep, p))  # fmt: skip
    return frame_from_parts(ep, [part for _, part in ok], clean)
