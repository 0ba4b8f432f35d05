"""``python -m refdata``: build the reference lake (see :mod:`refdata.pipeline`)."""

from __future__ import annotations

import sys

from refdata.pipeline import main

if __name__ == "__main__":
    sys.exit(main())
