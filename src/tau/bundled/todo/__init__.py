"""The bundled ``todo`` extension: a revisioned, dependency-aware checklist (pi-todo)."""
