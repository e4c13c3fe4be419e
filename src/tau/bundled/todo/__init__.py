"""The bundled ``todo`` extension: a revisioned, dependency-aware checklist (after pi-todo 1.4.1).

Modules, bottom up: :mod:`.state` (the pure state machine), :mod:`.results` (what calls return),
:mod:`.lines` and :mod:`.storage` (write verification against the session file), :mod:`.store` (recovery, verified
writes, quarantine), :mod:`.context` (the snapshot block), :mod:`.keys`, :mod:`.form` and :mod:`.overlay` (``/todo``),
:mod:`.runtime` (the wiring to ``tau.extension``). See ``docs/extensions/todo.md``.
"""

from tau.bundled.todo.runtime import extension

__all__ = ["extension"]
