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
    os.environ["FDKIT_TEST_CACHE_ROOT"] = os.environ["FDKIT_CACHE_DIR"]
# each xdist worker keeps its own cache folder under the run's (sharing one between processes is tested on its own,
# in tests/test_hostile.py; two workers hammering one folder corrupt it now and then: a known open problem)
_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if _WORKER and os.environ.get("FDKIT_TEST_CACHE_ROOT") == os.environ.get("FDKIT_CACHE_DIR"):
    os.environ["FDKIT_CACHE_DIR"] = os.path.join(os.environ["FDKIT_TEST_CACHE_ROOT"], _WORKER)


def pytest_unconfigure(config):  # noqa: D103
    if _OWN:
        shutil.rmtree(os.environ["FDKIT_CACHE_DIR"], ignore_errors=True)
