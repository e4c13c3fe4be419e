"""tau: a Python coding agent compatible with pi 1.6 session files, events and RPC.

The embedding API grows here as the layers land; see ``docs/architecture.md``.
"""

__version__ = "0.1.0.dev0"

__all__ = ["__version__"]
