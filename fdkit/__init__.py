"""fdkit: a pandas-native toolkit for company financial data, with an embedded Financial Data Service.

Example:
    >>> import fdkit
    >>> fdkit.Client().fetch("interest_rates_banks", {})["banks"]
    ['ECB', 'FED']
"""

from __future__ import annotations

import os as _os

import pyarrow as _pa

if "ARROW_DEFAULT_MEMORY_POOL" not in _os.environ:
    # Arrow's default pools (jemalloc, mimalloc) keep freed memory per thread; the system allocator hands it back.
    # A 20-ticker x 10-year panel grew the process by 62-70 MB with the default pool, 27 MB with this one
    # (BENCHMARKS.md). Set ARROW_DEFAULT_MEMORY_POOL to choose another.
    _pa.set_memory_pool(_pa.system_memory_pool())

from fdkit import accessor as _accessor  # noqa: F401, E402  (registers the .fds accessor)
from fdkit import api, catalog, errors
from fdkit.api import *  # noqa: F403  (fdkit.prices, fdkit.balance_sheets, ...: generated from the catalog)
from fdkit.catalog import CATALOG
from fdkit.client.config import configure
from fdkit.client.session import Client, default_client
from fdkit.datasets import DATASETS as DATASETS
from fdkit.datasets import available, filing_exhibits, financials
from fdkit.errors import (
    AuthenticationError,
    BadRequestError,
    CacheError,
    CacheMissError,
    ConfigurationError,
    DateRangeWarning,
    FdkitError,
    InvalidCursorError,
    LakeError,
    MissingPayloadError,
    NarrowTypeWarning,
    NotFoundError,
    PaginationError,
    PaymentRequiredError,
    RateLimitError,
    ServerError,
    SkippedWarning,
    StaleDataWarning,
    TransportError,
    TruncatedWarning,
    UnknownNameError,
)
from fdkit.research.factors import event_study

__version__ = "0.1.0"

__all__ = [
    *api.__all__,
    "available",
    "financials",
    "filing_exhibits",
    "event_study",
    "CATALOG",
    "Client",
    "configure",
    "default_client",
    "catalog",
    "errors",
    "server",  # noqa: F405  (imported on first use, see __getattr__)
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
    "CacheError",
    "PaginationError",
    "StaleDataWarning",
    "SkippedWarning",
    "TruncatedWarning",
    "NarrowTypeWarning",
    "MissingPayloadError",
    "ConfigurationError",
    "DateRangeWarning",
]


def __getattr__(name: str):
    if name == "server":  # the server (FastAPI/uvicorn) is imported on first use only
        import importlib

        return importlib.import_module(".server", __name__)
    raise AttributeError(f"module 'fdkit' has no attribute {name!r}")
