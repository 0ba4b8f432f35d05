#!/usr/bin/env python3
"""Build the reference lake ``data/`` from the real public data in ``../shared/data-real``.

Usage::

    python scripts/build_reference_data.py [SOURCE_DIR] [--out data]

The build is the package :mod:`refdata` (one stage per source, run in dependency order); this script is its
command line, the same as ``python -m refdata``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from refdata.pipeline import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
