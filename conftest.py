"""Suite-wide setup for the tests and the doctests of ``fdkit/``: never touch the user's real cache.

Every client the suite makes (the doctests' default clients included) writes its HTTP cache under a temporary
directory, removed at the end of the run, unless the caller set ``FDKIT_CACHE_DIR`` explicitly.
"""

from __future__ import annotations

import os
import shutil
import tempfile

_OWN = "FDKIT_CACHE_DIR" not in os.environ
if _OWN:
    os.environ["FDKIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="fdkit-test-cache-")


def pytest_unconfigure(config):  # noqa: D103
    if _OWN:
        shutil.rmtree(os.environ["FDKIT_CACHE_DIR"], ignore_errors=True)
