"""Words for counts on screen: ``1 line``, ``2 lines``, ``1 entry``, ``3 entries``."""

from __future__ import annotations

__all__ = ["counted"]


def counted(n: int, word: str) -> str:
    """``n`` and ``word``, the plural form (``-s``, ``-y`` → ``-ies``) unless ``n`` is 1."""
    if n == 1:
        return f"1 {word}"
    return f"{n} {word[:-1] + 'ies' if word.endswith('y') else word + 's'}"
