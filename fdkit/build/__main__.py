"""``python -m fdkit.build``: build the reference lake (see :mod:`fdkit.build.pipeline`)."""

from __future__ import annotations

import sys

from fdkit.build.pipeline import main

if __name__ == "__main__":
    sys.exit(main())
