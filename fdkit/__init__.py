"""fdkit: a pandas-native toolkit for company financial data, with an embedded Financial Data Service.

Example:
    >>> import fdkit
    >>> fdkit.Client().fetch("interest_rates_banks", {})["banks"]
    ['ECB', 'FED']
"""

from __future__ import annotations

from . import accessor as _accessor  # noqa: F401  (registers the .fds accessor)
from . import catalog, errors
from .catalog import CATALOG
from .client import Client, default_client
from .config import configure
from .datasets import DATASETS, available, filing_exhibits, financials
from .errors import (
    AuthenticationError,
    BadRequestError,
    CacheMissError,
    FdkitError,
    InvalidCursorError,
    LakeError,
    NotFoundError,
    PaymentRequiredError,
    RateLimitError,
    ServerError,
    TransportError,
    UnknownNameError,
)

__version__ = "0.1.0"

globals().update(DATASETS)  # fdkit.prices, fdkit.balance_sheets, ... (generated from the catalog)

__all__ = [
    *DATASETS,
    "available",
    "financials",
    "filing_exhibits",
    "CATALOG",
    "Client",
    "configure",
    "default_client",
    "catalog",
    "errors",
    "server",
    "FdkitError",
    "TransportError",
    "RateLimitError",
    "ServerError",
    "AuthenticationError",
    "PaymentRequiredError",
    "NotFoundError",
    "BadRequestError",
    "InvalidCursorError",
    "CacheMissError",
    "LakeError",
    "UnknownNameError",
]


def __getattr__(name: str):
    if name == "server":  # the server (FastAPI/uvicorn) is imported on first use only
        import importlib

        return importlib.import_module(".server", __name__)
    raise AttributeError(f"module 'fdkit' has no attribute {name!r}")
