"""Which entries a directory walk skips: the ignore rules fd applies (the ``ignore`` crate's), with ``pathspec``.

pi's find runs ``fd --hidden`` (and ``--no-require-git`` outside a git repository), so these rules
decide what it lists:

- ``.gitignore`` files, ``.git/info/exclude`` and the global git excludes file (``core.excludesFile``,
  else ``$XDG_CONFIG_HOME/git/ignore``): inside a git repository, or everywhere with
  ``require_git=False``. A ``.gitignore`` above a repository's root does not reach into it, and a
  nested repository stops its parent's ``.gitignore``;
- ``.ignore`` and ``.fdignore`` files, in and above the searched folder, with or without git;
- fd's own global ignore file ``$XDG_CONFIG_HOME/fd/ignore``;
- hidden files are *not* skipped (``--hidden``), and neither is ``.git`` itself.

Precedence is the crate's: the nearest ``.fdignore`` that has a say, else the nearest ``.ignore``,
else the nearest ``.gitignore`` (up to the repository root), else ``.git/info/exclude``, else the
global excludes; within one file the last matching line wins and ``!`` re-includes. A rule matches
the entry itself (``build/`` matches the folder ``build``, not the files under it: the walk never
enters an ignored folder, so they never come up, but a search rooted inside one still lists them).
"""

from __future__ import annotations

import os
from dataclasses import field
from pathlib import Path

from tau.common.dataclass import dataclass

__all__ = ["IgnoreRules", "IgnoreStack", "has_git"]


def has_git(directory: str) -> bool:
    """The crate's test for a repository root: a ``.git`` entry (folder or file) in it."""
    return os.path.lexists(os.path.join(directory, ".git"))


@dataclass(frozen=True)
class _RuleFile:
    """One ignore file's rules, matched against paths relative to ``base``."""

    base: str
    patterns: tuple  # pathspec patterns, in file order

    def decide(self, absolute: str, is_dir: bool) -> bool | None:
        """True: ignore; False: re-included by ``!``; None: no rule of this file matches."""
        relative = os.path.relpath(absolute, self.base)
        if relative.startswith(".."):
            return None
        candidate = relative.replace(os.sep, "/") + ("/" if is_dir else "")
        for pattern in reversed(self.patterns):
            match = pattern.regex.match(candidate)
            # The rule must match the entry itself, not one of its parent folders.
            if match is not None and match.end() == len(candidate):
                return bool(pattern.include)
        return None


def _read_rules(path: str, base: str) -> _RuleFile | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    from pathspec import GitIgnoreSpec

    patterns = tuple(p for p in GitIgnoreSpec.from_lines(lines).patterns if p.regex is not None)
    return _RuleFile(base, patterns) if patterns else None


@dataclass
class _Level:
    """The rules one directory contributes."""

    directory: str
    fdignore: _RuleFile | None = None
    ignore: _RuleFile | None = None
    gitignore: _RuleFile | None = None
    exclude: _RuleFile | None = None
    is_repo_root: bool = False

    @classmethod
    def read(cls, directory: str) -> _Level:
        level = cls(directory, is_repo_root=has_git(directory))
        level.fdignore = _read_rules(os.path.join(directory, ".fdignore"), directory)
        level.ignore = _read_rules(os.path.join(directory, ".ignore"), directory)
        level.gitignore = _read_rules(os.path.join(directory, ".gitignore"), directory)
        if level.is_repo_root:
            level.exclude = _read_rules(os.path.join(directory, ".git", "info", "exclude"), directory)
        return level


@dataclass
class IgnoreRules:
    """The rules in force in one directory of a walk: its own level and every level above it.

    Build the root's with :meth:`for_root`, and a subdirectory's with :meth:`child`.
    """

    levels: tuple[_Level, ...]  # the nearest first
    require_git: bool = True
    global_rules: tuple[_RuleFile, ...] = field(default_factory=tuple)  # (git excludes, fd ignore)

    @classmethod
    def for_root(cls, root: str, *, require_git: bool = True, home: str | None = None) -> IgnoreRules:
        """The rules at a walk's root: its own ignore files and those of every folder above it."""
        chain = [root]
        while (parent := os.path.dirname(chain[-1])) != chain[-1]:
            chain.append(parent)
        return cls(tuple(_Level.read(d) for d in chain), require_git, _global_rules(home))

    def child(self, directory: str) -> IgnoreRules:
        return IgnoreRules((_Level.read(directory), *self.levels), self.require_git, self.global_rules)

    @property
    def _git_applies(self) -> bool:
        return not self.require_git or any(level.is_repo_root for level in self.levels)

    def ignored(self, absolute: str, is_dir: bool) -> bool:
        """Whether the walk skips ``absolute`` (an entry of the directory these rules belong to)."""
        decisions: list[bool | None] = [None, None, None, None]  # fdignore, ignore, gitignore, exclude
        git = self._git_applies
        saw_repo_root = False
        for level in self.levels:
            for slot, rules in enumerate((level.fdignore, level.ignore)):
                if decisions[slot] is None and rules is not None:
                    decisions[slot] = rules.decide(absolute, is_dir)
            if git and not saw_repo_root:
                for slot, rules in ((2, level.gitignore), (3, level.exclude)):
                    if decisions[slot] is None and rules is not None:
                        decisions[slot] = rules.decide(absolute, is_dir)
            saw_repo_root = saw_repo_root or level.is_repo_root
        for decision in decisions:
            if decision is not None:
                return decision
        if git and self.global_rules[:1]:
            decision = self.global_rules[0].decide(absolute, is_dir)
            if decision is not None:
                return decision
        for rules in self.global_rules[1:]:
            decision = rules.decide(absolute, is_dir)
            if decision is not None:
                return decision
        return False


def _config_home(home: str | None) -> str:
    configured = os.environ.get("XDG_CONFIG_HOME")
    if configured and os.path.isabs(configured):
        return configured
    return os.path.join(home or os.path.expanduser("~"), ".config")


def _git_excludes_file(home: str | None) -> str | None:
    """``core.excludesFile`` from the user's git config, else git's default ``$XDG_CONFIG_HOME/git/ignore``."""
    home = home or os.path.expanduser("~")
    for config in (os.path.join(_config_home(home), "git", "config"), os.path.join(home, ".gitconfig")):
        value = _excludes_setting(config)
        if value:
            return os.path.expanduser(value) if value.startswith("~") else value
    return os.path.join(_config_home(home), "git", "ignore")


def _excludes_setting(config: str) -> str | None:
    try:
        text = Path(config).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    section = ""
    found = None
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            section = line.strip("[]").strip().lower()
        elif section == "core" and "=" in line:
            key, _, value = line.partition("=")
            if key.strip().lower() == "excludesfile":
                found = value.strip().strip('"')
    return found


def _global_rules(home: str | None) -> tuple[_RuleFile, ...]:
    """The global git excludes (only where git rules apply) and fd's own global ignore file."""
    rules: list[_RuleFile | None] = []
    excludes = _git_excludes_file(home)
    rules.append(_read_rules(excludes, "/") if excludes else None)
    rules.append(_read_rules(os.path.join(_config_home(home), "fd", "ignore"), "/"))
    # Keep the two slots apart: an empty slot stays so that ``[:1]`` is always the git one.
    return tuple(r if r is not None else _RuleFile("/", ()) for r in rules)


@dataclass(frozen=True)
class IgnoreStack:
    """The simpler rules pi's skill and template discovery applies (no git logic): the ``.gitignore``,
    ``.ignore`` and ``.fdignore`` of each folder from the discovery root down, the nearest deciding."""

    root: str
    files: tuple[_RuleFile, ...] = ()  # nearest last

    def with_directory(self, directory: str) -> IgnoreStack:
        found = [
            rules
            for name in (".gitignore", ".ignore", ".fdignore")
            if (rules := _read_rules(os.path.join(directory, name), directory)) is not None
        ]
        return IgnoreStack(self.root, (*self.files, *found)) if found else self

    def ignored(self, absolute: str, is_dir: bool) -> bool:
        for rules in reversed(self.files):
            decision = rules.decide(absolute, is_dir)
            if decision is not None:
                return decision
        return False
