"""Company names: whether two names, as different sources spell them, name one company.

Used where the lake joins sources by name (the build's identity rules) and where it checks them (the invariant
that a CIK's names agree). The comparison reads names as words: case, punctuation, HTML entities, apostrophes and
legal suffixes aside.

Example:
    >>> same_company("Apple", "Apple Inc."), names_agree("Domino&#39;s Pizza Inc", "Domino's")
    (True, True)
"""

from __future__ import annotations

import html
import re

__all__ = ["SUFFIXES", "name_words", "names_agree", "same_company", "same_name"]

#: words that say what kind of company, not which
SUFFIXES = re.compile(r"\b(INC|CORP|CORPORATION|CO|COMPANY|LTD|LIMITED|PLC|THE|HOLDINGS|HLDGS|GROUP|NEW|CLASS|CL)\b")
_CLASS = re.compile(r"\(?\bCLASS\s+[A-Z]\b\)?")
_STOP = {"THE", "INC", "CORP", "CORPORATION", "CO", "COMPANY", "LTD", "PLC", "GROUP", "HOLDINGS"}


def name_words(name: object) -> list[str]:
    """A name's words, upper case, punctuation and legal suffixes dropped.

    Args:
        name: a company name.

    Returns:
        Its words.

    Example:
        >>> name_words("The Cooper Companies, Inc.")
        ['COOPER', 'COMPANIES']
    """
    return SUFFIXES.sub(" ", re.sub(r"[^A-Z0-9 ]", " ", str(name).upper())).split()


def same_company(a: object, b: object) -> bool:
    """Whether two names name one company: the shorter's words begin the longer's (suffixes aside).

    Args:
        a: a name.
        b: another.

    Returns:
        ``True`` where they agree; ``False`` where either is empty.

    Example:
        >>> same_company("Apple", "Apple Inc."), same_company("Hansen Natural", "Monster Beverage")
        (True, False)
    """
    x, y = name_words(a), name_words(b)
    n = min(len(x), len(y))
    return n > 0 and x[:n] == y[:n]


def names_agree(a: object, b: object) -> bool:
    """Whether two listing names name one company.

    :func:`same_company`, or the same first word or the same words once HTML entities and apostrophes are read
    (``Domino&#39;s Pizza Inc``, ``Caseys General Stores``, ``Smith (A.O.) Corporation`` / ``A. O. Smith``,
    ``Deckers Outdoor`` / ``Deckers Brands``), or the same letters once the words are joined (``V.F. Corporation``
    / ``VF Corporation``).

    Args:
        a: a name.
        b: another.

    Returns:
        ``True`` where they agree.

    Example:
        >>> names_agree("Smith (A.O.) Corporation", "A. O. Smith"), names_agree("American Apparel", "AppLovin")
        (True, False)
        >>> names_agree("V.F. Corporation", "VF Corporation")
        True
    """
    x, y = (html.unescape(str(n)).replace("'", "").replace("\u2019", "") for n in (a, b))
    if same_company(x, y):
        return True
    wx, wy = (re.sub(r"[^A-Z0-9 ]", " ", n.upper()).split() for n in (x, y))
    wx, wy = [w for w in wx if w not in _STOP], [w for w in wy if w not in _STOP]
    return bool(wx and wy) and (wx[0] == wy[0] or set(wx) == set(wy) or "".join(wx) == "".join(wy))


def same_name(a: object, b: object) -> bool:
    """Whether two names are one company's name, strictly: the checks of the lake's invariants.

    The words agree (one's begin the other's) or the letters do once joined, HTML entities, apostrophes, legal
    suffixes, share-class notes (``(Class A)``) and plurals (``Minerals Technologies`` / ``Technology``) aside.
    Unlike :func:`names_agree` a shared first word is not enough (``American Apparel`` / ``American Express``).

    Args:
        a: a name.
        b: another.

    Returns:
        ``True`` where they agree.

    Example:
        >>> same_name("Alphabet Inc. (Class C)", "Alphabet Inc. (Class A)"), same_name("V.F. Corp", "VF Corporation")
        (True, True)
        >>> same_name("American Apparel", "American Express"), same_name("General Motors", "General Electric")
        (False, False)
    """
    x, y = (
        [_singular(w) for w in name_words(_CLASS.sub(" ", html.unescape(str(n)).replace("'", "").upper()))]
        for n in (a, b)
    )
    n = min(len(x), len(y))
    return n > 0 and (x[:n] == y[:n] or "".join(x) == "".join(y))


def _singular(word: str) -> str:
    """A word's singular, roughly (``TECHNOLOGIES`` -> ``TECHNOLOGY``, ``SYSTEMS`` -> ``SYSTEM``)."""
    if len(word) > 4 and word.endswith("IES"):
        return word[:-3] + "Y"
    return word[:-1] if len(word) > 3 and word.endswith("S") and not word.endswith("SS") else word
