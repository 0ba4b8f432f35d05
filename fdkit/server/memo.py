"""The server's memo of answers: least recently used first out, bounded by bytes (not entries).

An answer is kept under the key of what changes it (the endpoint and the validated query without ``limit``, which
only slices the list). Its size is the length of its JSON, so no query can pin more than the budget.

Example:
    >>> m = AnswerMemo(budget=100)
    >>> m.get_or_make("k", lambda: ["x" * 10], lambda v: 12)
    ['xxxxxxxxxx']
    >>> m.bytes, len(m)
    (12, 1)
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

__all__ = ["AnswerMemo"]


class AnswerMemo:
    """A thread-safe LRU memo bounded by the summed size of its values.

    Args:
        budget: the most bytes kept; an answer larger than the budget is answered but not kept.
    """

    def __init__(self, budget: int = 128 * 2**20) -> None:
        self.budget = budget
        self.bytes = 0
        self._items: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def get_or_make(self, key: Hashable, make: Callable[[], Any], size: Callable[[Any], int]) -> Any:
        """The value of ``key``, made (outside the lock) and kept when absent.

        Args:
            key: what the value depends on.
            make: computes the value.
            size: its size in bytes.

        Returns:
            The value.
        """
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
                return hit[0]
        value = make()
        n = size(value)
        if n > self.budget:
            return value
        with self._lock:
            if key not in self._items:
                self._items[key] = (value, n)
                self.bytes += n
            while self.bytes > self.budget and self._items:
                _, (_, dropped) = self._items.popitem(last=False)
                self.bytes -= dropped
        return value

    def peek(self, key: Hashable) -> Any:
        """The value of ``key`` if it is kept (marked as recently used), else ``None``; never makes one."""
        with self._lock:
            hit = self._items.get(key)
            if hit is None:
                return None
            self._items.move_to_end(key)
            return hit[0]

    def clear(self) -> None:
        """Forget everything (the lake changed)."""
        with self._lock:
            self._items.clear()
            self.bytes = 0
