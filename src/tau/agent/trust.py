"""Project trust: whether ``<cwd>/.tau`` settings and extensions may load (pi's trust manager).

Decision order (pi-host §9.4): ``--approve``/``--no-approve``, then extension ``project_trust``
handlers (decided by the caller), then the saved decision in ``<agentDir>/trust.json`` for the cwd or
its closest ancestor, then ``defaultProjectTrust``.
"""

from __future__ import annotations

import json
from pathlib import Path

from tau.common.config_files import ConfigFileError, read_json_file
from tau.common.paths import agent_dir, project_config_dir

__all__ = ["TRUST_RESOURCES", "TrustError", "needs_trust", "resolve_trust", "save_decision", "saved_decision"]

TRUST_RESOURCES = (
    "settings.json",
    "mcp.json",
    "extensions",
    "skills",
    "prompts",
    "themes",
    "SYSTEM.md",
    "APPEND_SYSTEM.md",
)


class TrustError(ValueError):
    """``trust.json`` cannot be read; the message names the file."""


def needs_trust(cwd: str | Path) -> bool:
    """True when the project has configuration that only a trusted project may load: an entry of
    :data:`TRUST_RESOURCES` in ``<cwd>/.tau``, or an ``.agents/skills`` folder in the cwd or a parent
    (the user's own ``~/.agents/skills`` aside)."""
    config = project_config_dir(cwd)
    if any((config / name).exists() for name in TRUST_RESOURCES):
        return True
    user_skills = (Path.home() / ".agents" / "skills").resolve()
    current = Path(cwd).resolve()
    for directory in (current, *current.parents):
        candidate = directory / ".agents" / "skills"
        if candidate.exists() and candidate.resolve() != user_skills:
            return True
    return False


def _trust_file(directory: Path | None) -> Path:
    return (directory or agent_dir()) / "trust.json"


def _read(path: Path) -> dict[str, bool | None]:
    try:
        data, found = read_json_file(path)
    except ConfigFileError as exc:
        raise TrustError(f"Failed to read trust store {exc}") from exc
    if not found:
        return {}
    if not isinstance(data, dict):
        raise TrustError(f"Invalid trust store {path}: expected an object")
    for key, value in data.items():
        if value not in (True, False, None):
            raise TrustError(
                f"Invalid trust store {path}: value for {json.dumps(key)} must be true, false, or null"
            )
    return data


def saved_decision(cwd: str | Path, *, directory: Path | None = None) -> bool | None:
    """The decision saved for ``cwd`` or its closest ancestor, if any."""
    data = _read(_trust_file(directory))
    current = Path(cwd).resolve()
    for candidate in (current, *current.parents):
        value = data.get(str(candidate))
        if value is True or value is False:
            return value
    return None


def save_decision(cwd: str | Path, decision: bool | None, *, directory: Path | None = None) -> None:
    """Remember (or with ``None`` forget) the decision for ``cwd``; keys stay sorted as pi writes them."""
    path = _trust_file(directory)
    data = _read(path)
    data[str(Path(cwd).resolve())] = decision
    cleaned = {key: data[key] for key in sorted(data) if data[key] is not None}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(cleaned, indent=2) + "\n", encoding="utf-8")


def resolve_trust(
    cwd: str | Path,
    *,
    approve: bool | None = None,
    default_policy: str = "ask",
    directory: Path | None = None,
) -> bool:
    """Trust for a non-interactive run: ``approve`` flag, saved decision, then the policy.

    ``ask`` and ``never`` mean untrusted outside the interactive mode; ``always`` means trusted. A project
    without trust-requiring resources is trusted (there is nothing to guard).
    """
    if approve is not None:
        return approve
    if not needs_trust(cwd):
        return True
    saved = saved_decision(cwd, directory=directory)
    if saved is not None:
        return saved
    return default_policy == "always"
