"""The two contracts ``fdkit serve`` keeps: the seed's (the default) and the 2026 document's.

fdkit's catalog (:mod:`.endpoints`) follows the 2026 OpenAPI document where the two disagree. The seed (the
contract the service was first specified by, and the one its early clients are written for) differs on a few
points; each is one :class:`Difference` of :data:`DIFFERENCES`: what the seed says, what the 2026 document says,
and the change that makes the seed's endpoint from the catalog's. :func:`catalog_for` applies them, the server's
routes, its OpenAPI document and ``docs/CONTRACTS.md`` (:func:`differences_table`) are made from the result, and
``tests/test_contracts.py`` asks each difference of a service of each contract.

Example:
    >>> seed, v2026 = catalog_for("seed"), catalog_for("2026")
    >>> seed["prices_tickers"].auth, v2026["prices_tickers"].auth
    (True, False)
    >>> seed["inflation"].page_size, v2026["inflation"].page_size
    (10, 500)
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Literal, get_args

from fdkit.catalog.endpoints import CATALOG, Endpoint, Param
from fdkit.errors import UnknownNameError

__all__ = [
    "CONTRACTS",
    "DEFAULT_CONTRACT",
    "DIFFERENCES",
    "API_VERSION",
    "Contract",
    "Difference",
    "catalog_for",
    "check_contract",
    "differences_table",
]

Contract = Literal["seed", "2026"]
#: the contracts ``fdkit serve --contract`` takes
CONTRACTS: tuple[str, ...] = get_args(Contract)
#: what ``fdkit serve``, :func:`fdkit.server.start` and :func:`fdkit.server.app.create_app` serve unless told
DEFAULT_CONTRACT: Contract = "seed"
#: ``info.version`` of the service's document: the API's version, which both the seed and the 2026 document give
API_VERSION = "1.0.0"


@dataclass(frozen=True)
class Difference:
    """One point where the seed's contract and the 2026 document's differ.

    Attributes:
        topic: what differs, in a few words (the table's first column).
        seed: what the seed says (a sentence).
        v2026: what the 2026 contract serves (the catalog): the 2026 document's rule, or fdkit's own where the
            document has no such path (a sentence).
        applies: whether an endpoint of the catalog is one this difference changes.
        to_seed: the seed's endpoint made from the catalog's.
    """

    topic: str
    seed: str
    v2026: str
    applies: Callable[[Endpoint], bool]
    to_seed: Callable[[Endpoint], Endpoint]

    def endpoints(self) -> tuple[str, ...]:
        """The names of the catalog's endpoints this difference changes.

        Returns:
            The names, in catalog order.

        Example:
            >>> DIFFERENCES[1].endpoints()
            ('inflation', 'labor')
        """
        return tuple(name for name, ep in CATALOG.items() if self.applies(ep))


def _with_param(ep: Endpoint, name: str, **changes: object) -> Endpoint:
    """``ep`` with its parameter ``name`` changed."""
    params = tuple(replace(p, **changes) if p.name == name else p for p in ep.params)  # type: ignore[arg-type]
    return replace(ep, params=params)


def _whole_fund(ep: Endpoint) -> Endpoint:
    """``/index-funds`` as the seed has it: a fund's holdings on one page unless a ``limit`` is asked."""
    limit = Param(
        "limit", "integer", min=1, max=1000, description="Holdings wanted (default: all of them, on one page)."
    )
    return replace(ep, params=tuple(limit if p.name == "limit" else p for p in ep.params), default_limit=None)


#: every difference of the two contracts, in the order ``docs/CONTRACTS.md`` lists them
DIFFERENCES: tuple[Difference, ...] = (
    Difference(
        "an API key on listings",
        "Every endpoint needs a valid `X-API-KEY`; a request without one, or with an unknown one, is a 401.",
        "The 12 listings the document marks `security: []` answer without a key, and so do 14 more fdkit opens "
        "(its own listings, and `/index-funds/tickers`, `/institutional-holdings/tickers` and `/investors`, "
        "which the document keys); a key sent with them is still checked for metering.",
        lambda ep: not ep.auth,
        lambda ep: replace(ep, auth=True),
    ),
    Difference(
        "macro history pages",
        "`/macro/inflation` and `/macro/labor` answer cursor pages of 10 records with `next_page_url`.",
        "Not in the 2026 document; fdkit pages them 500 records a page (monthly or weekly series over decades).",
        lambda ep: ep.name in ("inflation", "labor"),
        lambda ep: replace(ep, page_size=10),
    ),
    Difference(
        "index fund holdings",
        "`/index-funds?ticker=SPY` answers all of the fund's holdings (503) on one page; `limit` cuts them (and "
        "fdkit's `offset` is still taken).",
        "50 holdings unless `limit` asks more (at most 1,000), paged by `offset`, without `next_page_url`.",
        lambda ep: ep.name == "index_funds",
        _whole_fund,
    ),
    Difference(
        "`interval_multiplier` of `/prices`",
        "Required (1 for plain bars); a request without it is a 400.",
        "Not in the document; fdkit takes it as an extension that defaults to 1.",
        lambda ep: ep.name == "prices",
        lambda ep: _with_param(ep, "interval_multiplier", required=True, default=None),
    ),
    Difference(
        "`holding_type` of `/insider-ownership`",
        "`common` (a Form 3/5 table I holding) or `derivative` (table II).",
        "The 2026 document has no `/insider-ownership`; fdkit names the table: `non_derivative` or `derivative`.",
        lambda ep: ep.name == "insider_ownership",
        lambda ep: replace(ep, wire_values=MappingProxyType({"holding_type": {"non_derivative": "common"}})),
    ),
)


def check_contract(contract: str) -> Contract:
    """``contract``, when it is one the service keeps.

    Args:
        contract: ``"seed"`` or ``"2026"``.

    Returns:
        The contract.

    Raises:
        UnknownNameError: naming the contracts there are.

    Example:
        >>> check_contract("2026")
        '2026'
    """
    if contract not in CONTRACTS:
        raise UnknownNameError(f"unknown contract {contract!r}; the service keeps {', '.join(CONTRACTS)}")
    return contract  # type: ignore[return-value]


def catalog_for(contract: str = DEFAULT_CONTRACT) -> Mapping[str, Endpoint]:
    """The endpoints a service of ``contract`` serves: the catalog, with the seed's differences applied for it.

    Args:
        contract: ``"seed"`` or ``"2026"`` (the catalog as it is).

    Returns:
        Endpoint name -> :class:`~fdkit.catalog.endpoints.Endpoint`, in catalog order (the same objects as
        :data:`~fdkit.catalog.endpoints.CATALOG` where nothing differs).

    Raises:
        UnknownNameError: for a contract the service does not keep.

    Example:
        >>> catalog_for("seed")["prices"].param("interval_multiplier").required
        True
    """
    return _catalog(check_contract(contract))


@functools.cache
def _catalog(contract: Contract) -> Mapping[str, Endpoint]:
    """:func:`catalog_for` of a checked contract, made once (``catalog_for()`` and ``catalog_for("seed")`` alike)."""
    if contract == "2026":
        return CATALOG
    served = dict(CATALOG)
    for difference in DIFFERENCES:
        for name in difference.endpoints():
            served[name] = difference.to_seed(served[name])
    return MappingProxyType(served)


def differences_table() -> str:
    """Every difference of the two contracts as a Markdown table (``docs/CONTRACTS.md`` holds it).

    Returns:
        The table, one row a difference: what, the seed, the 2026 document, the paths it touches.

    Example:
        >>> differences_table().splitlines()[0]
        '| what | seed (`fdkit serve`, the default) | 2026 (`fdkit serve --contract 2026`) | paths |'
    """
    rows = [
        "| what | seed (`fdkit serve`, the default) | 2026 (`fdkit serve --contract 2026`) | paths |",
        "|---|---|---|---|",
    ]
    for d in DIFFERENCES:
        paths = ", ".join(f"`{CATALOG[name].path}`" for name in d.endpoints())
        rows.append(f"| {d.topic} | {d.seed} | {d.v2026} | {paths} |")
    return "\n".join(rows) + "\n"
