"""How long each Python block of README.md takes cold: a fresh interpreter and an empty cache folder per block.

The README states these times next to its long blocks; this is how they are measured (2 cores).

Usage:
    python benchmarks/readme_blocks.py            # every block, one run each
    python benchmarks/readme_blocks.py --runs 3   # the median of three
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def blocks(text: str) -> list[str]:
    """The README's ```python blocks, in order."""
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    for i, code in enumerate(blocks(README.read_text()), start=1):
        times = []
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as cwd:
                env = {**os.environ, "FDKIT_CACHE_DIR": cache, "FDKIT_PROGRESS": "0", "MPLBACKEND": "Agg"}
                t = time.perf_counter()
                done = subprocess.run(
                    [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, check=False
                )
                times.append(time.perf_counter() - t)
            if done.returncode:
                print(done.stderr[-1500:], file=sys.stderr)
                raise SystemExit(f"block {i} failed")
        first = code.strip().splitlines()[-1][:70]
        print(f"block {i:2d}: {statistics.median(times):6.1f} s cold  ({len(code.splitlines())} lines; ... {first})")


if __name__ == "__main__":
    main()
