"""Regular expressions compiled on first use, so a module's pattern constants cost nothing at import.

``re.compile`` takes ~0.3 ms a pattern; the two dozen module-level patterns a ``tau -p`` run imports
added ~10 ms to every start, though most of them never match anything in a given run.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["LazyPattern", "lazy_pattern"]


class LazyPattern:
    """``re.compile(source, flags)``, made when an attribute (``.search``, ``.pattern`` ...) is first read.

    Each attribute read is then kept on the instance: later calls cost what the compiled pattern's own do.
    """

    def __init__(self, source: str | bytes, flags: int = 0) -> None:
        self._source = source
        self._flags = flags

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_source", "_flags"):
            raise AttributeError(name)
        value = getattr(self.compiled(), name)
        self.__dict__[name] = value
        return value

    def compiled(self) -> re.Pattern[Any]:
        """The compiled pattern (``re`` keeps it in its own cache)."""
        return re.compile(self._source, self._flags)

    def __repr__(self) -> str:
        return repr(self.compiled())


def lazy_pattern(source: str | bytes, flags: int = 0) -> LazyPattern:
    """A pattern that compiles on first use: ``_WORD = lazy_pattern(r"\\w+")`` then ``_WORD.search(text)``."""
    return LazyPattern(source, flags)
