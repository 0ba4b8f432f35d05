"""What an error says to do next, where the client knows it: the call that lists a service's tickers.

A ``Ticker NOPEX not found`` from the service leaves a newcomer guessing whether the symbol is misspelt, delisted or
simply not in this service's data. The client knows which listing names the endpoint's tickers, so the error says
it (``fdkit.available('prices')``; the command line says ``fdkit tickers prices``).

Example:
    >>> from fdkit.errors import NotFoundError
    >>> str(name_the_listing(NotFoundError("Ticker NOPEX not found", status=404, path="/prices"), "/prices"))
    "Ticker NOPEX not found (HTTP 404, /prices); fdkit.available('prices') lists the tickers it has"
"""

from __future__ import annotations

from fdkit.catalog.endpoints import tickers_listed_by
from fdkit.errors import TICKER_NOT_FOUND, FdkitError, NotFoundError


def name_the_listing(err: FdkitError, path: str) -> FdkitError:
    """Give a ``Ticker X not found`` error the listing of the endpoint's tickers as its next step.

    Args:
        err: the error a response made.
        path: the request's path.

    Returns:
        ``err`` itself, its ``next_step`` set where a listing names the endpoint's tickers.
    """
    if isinstance(err, NotFoundError) and TICKER_NOT_FOUND.match(err.message):
        name = tickers_listed_by(path)
        if name is not None:
            err.next_step = f"fdkit.available({name!r}) lists the tickers it has"
    return err
