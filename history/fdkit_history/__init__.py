"""fdkit-history: the ``price_history`` dataset of fdkit's embedded service, as a separate data package.

It holds ``_data/price_history/part-YYYY.parquet`` and ``_data/delistings``, built from the repository by
``python -m refdata.history_package`` (provenance and coverage: ``history/SOURCES.md`` and the checkout's
``data/SOURCES.md``). fdkit finds it through the ``fdkit.lakes`` entry point: installed,
``fdkit.price_history(...)``, ``fdkit.delistings(...)`` and ``fdkit serve`` serve it.

Example:
    >>> (DATA_DIR / "price_history").is_dir()
    True
"""

from pathlib import Path

__all__ = ["DATA_DIR"]

#: the folder holding the package's datasets (a lake of its own)
DATA_DIR = Path(__file__).resolve().parent / "_data"
