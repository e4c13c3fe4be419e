"""The progress bar of ``tau savings`` (:class:`tau.modes.progress.Progress`, shared with ``tau batch``)."""

from tau.modes.progress import Progress

__all__ = ["Progress"]
