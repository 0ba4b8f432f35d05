"""The Python blocks of a Markdown page, as a reader runs them (README.md and docs/*.md alike).

A block runs on its own, as a reader pastes it. A block that goes on from the one before it says so on its first
line with :data:`CONTINUES` and is run after that one (the chain of blocks it continues, in order).
"""

from __future__ import annotations

import re

#: the first line of a block that continues the block above it (run after it, in the same interpreter)
CONTINUES = "# (continues the block above)"


def blocks(text: str) -> list[tuple[int, str]]:
    """The ``python`` blocks of a Markdown text: (line number of the fence, code).

    Example:
        >>> blocks("a\\n```python\\nx = 1\\n```\\n")
        [(2, 'x = 1\\n')]
    """
    return [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in re.finditer(r"```python\n(.*?)```", text, re.S)]


def runnable(text: str) -> list[tuple[int, str]]:
    """Each block as it runs: itself, after the blocks it continues (``CONTINUES`` on its first line).

    Example:
        >>> md = "```python\\nx = 1\\n```\\n```python\\n" + CONTINUES + "\\nprint(x)\\n```\\n"
        >>> [code.splitlines() for _, code in runnable(md)]
        [['x = 1'], ['x = 1', '# (continues the block above)', 'print(x)']]
    """
    out: list[tuple[int, str]] = []
    for line, code in blocks(text):
        if code.startswith(CONTINUES):
            if not out:
                raise ValueError(f"the block at line {line} continues a block above, and there is none")
            code = out[-1][1] + code
        out.append((line, code))
    return out
