"""Regenerate ``pi_search_vectors.json``: pi 1.6's own grep, find and ls over ``search_tree.py``'s tree.

    PI_DIST=/work/pi-run/node_modules/@earendil-works python tests/tools/data/generate_pi_search_vectors.py

Each case of :data:`CASES` runs through pi's compiled tool definitions (``createGrepToolDefinition``,
``createFindToolDefinition``, ``createLsToolDefinition``) in a fresh copy of the tree; the file records
the case and pi's result (``content``/``details``) or its error. The tree lives at :data:`PLACE` in the
file (its real temporary folder is replaced).

pi runs the real programs: ``rg`` is the ``ripgrep`` wheel's binary (14.1.0) behind a one-line wrapper
that adds ``--sort path`` (tau asks rg for a stable order; pi leaves it to rg's parallel walk, whose
order is the file system's), and ``fd`` is Debian's ``fd-find`` 8.6.0 (``apt-get install fd-find``),
which is why the tree is a git repository: fd 8.6 predates ``--no-require-git``, which pi passes
outside repositories. ``HOME`` points into the scratch folder, so no global git or fd ignore file applies.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from search_tree import make_tree  # noqa: E402

DIST = os.environ.get("PI_DIST", "/work/pi-run/node_modules/@earendil-works")
NODE = os.environ.get("NODE", "/work/pi-run/node_modules/.bin/node")
PLACE = "/tmp/tau-search-tree"
OUT = HERE / "pi_search_vectors.json"

CASES: list[tuple[str, str, dict]] = [
    # grep
    ("grep-all", "grep", {"pattern": "TODO"}),
    ("grep-limit", "grep", {"pattern": "TODO", "limit": 3}),
    ("grep-limit-exact", "grep", {"pattern": "hello", "limit": 1}),
    ("grep-context", "grep", {"pattern": "TODO", "path": "src", "context": 1}),
    ("grep-context-limit", "grep", {"pattern": "TODO", "path": "many.txt", "context": 2, "limit": 2}),
    ("grep-ignore-case", "grep", {"pattern": "HELLO", "ignoreCase": True}),
    ("grep-case-sensitive", "grep", {"pattern": "Hello"}),
    ("grep-literal", "grep", {"pattern": "a.b", "literal": True}),
    ("grep-regex", "grep", {"pattern": "a.b"}),
    ("grep-glob-name", "grep", {"pattern": "TODO", "glob": "*.py"}),
    ("grep-glob-path", "grep", {"pattern": "TODO", "glob": "./src/**/*.py"}),
    ("grep-glob-negated", "grep", {"pattern": "TODO", "glob": "!*.txt", "limit": 5}),
    ("grep-path-dir", "grep", {"pattern": "TODO", "path": "sub"}),
    ("grep-path-file", "grep", {"pattern": "TODO", "path": "README.md"}),
    ("grep-hidden", "grep", {"pattern": "hidden"}),
    ("grep-ignored", "grep", {"pattern": "ignored|hides"}),
    ("grep-whitelisted", "grep", {"pattern": "whitelisted"}),
    ("grep-no-match", "grep", {"pattern": "NOTHING_MATCHES_THIS"}),
    ("grep-missing-path", "grep", {"pattern": "x", "path": "nope"}),
    ("grep-long-line", "grep", {"pattern": "LONGMARK"}),
    ("grep-binary", "grep", {"pattern": "BINMARK"}),
    ("grep-binary-explicit", "grep", {"pattern": "BINMARK", "path": "src/data.bin"}),
    ("grep-crlf", "grep", {"pattern": "CRLFMARK"}),
    ("grep-unicode", "grep", {"pattern": "caf\u00e9"}),
    ("grep-byte-cap", "grep", {"pattern": "WIDE", "limit": 1000}),
    ("grep-byte-and-match-cap", "grep", {"pattern": "WIDE", "limit": 150}),
    ("grep-bad-regex", "grep", {"pattern": "("}),
    ("grep-zero-limit", "grep", {"pattern": "TODO", "path": "many.txt", "limit": 0}),
    # find
    ("find-py", "find", {"pattern": "*.py"}),
    ("find-all", "find", {"pattern": "*", "path": "sub"}),
    ("find-everything", "find", {"pattern": "*"}),
    ("find-path-pattern", "find", {"pattern": "src/*.py"}),
    ("find-dot-slash", "find", {"pattern": "./src/*.txt"}),
    ("find-double-star", "find", {"pattern": "**/*.txt"}),
    ("find-double-star-dir", "find", {"pattern": "sub/**"}),
    ("find-smart-case-lower", "find", {"pattern": "*.txt", "path": "sub"}),
    ("find-smart-case-upper", "find", {"pattern": "*.TXT"}),
    ("find-path-case", "find", {"pattern": "SUB/*.txt"}),
    ("find-alternates", "find", {"pattern": "{*.md,*.env}"}),
    ("find-class", "find", {"pattern": "[rR]*"}),
    ("find-question", "find", {"pattern": "?.tmp", "path": "sub"}),
    ("find-hidden", "find", {"pattern": ".*"}),
    ("find-ignored", "find", {"pattern": "*.log"}),
    ("find-limit", "find", {"pattern": "*.txt", "limit": 2}),
    ("find-limit-exact", "find", {"pattern": "*.py", "limit": 2}),
    ("find-no-match", "find", {"pattern": "*.zzz"}),
    ("find-missing-path", "find", {"pattern": "*", "path": "nope"}),
    ("find-dir-name", "find", {"pattern": "nested"}),
    # ls
    ("ls-root", "ls", {}),
    ("ls-dir", "ls", {"path": "src"}),
    ("ls-limit", "ls", {"limit": 3}),
    ("ls-zero-limit", "ls", {"path": "sub", "limit": 0}),
    ("ls-empty", "ls", {"path": "emptydir"}),
    ("ls-missing", "ls", {"path": "nope"}),
    ("ls-file", "ls", {"path": "README.md"}),
    ("ls-names", "ls", {"path": "names"}),
    ("ls-links", "ls", {"path": "links"}),
    ("find-links", "find", {"pattern": "*", "path": "links"}),
    ("grep-through-links", "grep", {"pattern": "TODO", "path": "links"}),
    ("find-names", "find", {"pattern": "a*", "path": "names"}),
]

ORACLE = """
import { createGrepToolDefinition, createFindToolDefinition, createLsToolDefinition }
  from "%s/pi-coding-agent/dist/core/tools/index.js";
import { readFileSync } from "fs";
const make = { grep: createGrepToolDefinition, find: createFindToolDefinition, ls: createLsToolDefinition };
const [cwd] = process.argv.slice(2);
const c = JSON.parse(readFileSync(0, "utf-8"));
try {
  const r = await make[c.tool](cwd).execute("call_1", c.params, undefined, undefined, { cwd });
  console.log(JSON.stringify({ content: r.content, details: r.details ?? null }));
} catch (e) { console.log(JSON.stringify({ error: e.message })); }
"""


def _tools_path(scratch: Path) -> str:
    binaries = scratch / "bin"
    binaries.mkdir()
    rg = shutil.which("rg", path=str(Path(sys.executable).parent)) or shutil.which("rg")
    fd = shutil.which("fdfind") or shutil.which("fd")
    if not rg or not fd:
        raise SystemExit("needs rg (the ripgrep wheel) and fd (Debian's fd-find)")
    (binaries / "rg").write_text(f'#!/bin/sh\nexec "{rg}" --sort path "$@"\n')
    (binaries / "fd").write_text(f'#!/bin/sh\nexec "{fd}" "$@"\n')
    for name in ("rg", "fd"):
        (binaries / name).chmod(0o755)
    return f"{binaries}:{os.environ['PATH']}"


def main() -> int:
    results = []
    with tempfile.TemporaryDirectory(prefix="pi-search-") as tmp:
        scratch = Path(tmp)
        oracle = scratch / "oracle.mjs"
        oracle.write_text(ORACLE % DIST)
        env = {
            **os.environ,
            "PATH": _tools_path(scratch),
            "HOME": str(scratch),
            "XDG_CONFIG_HOME": str(scratch),
        }
        for name, tool, params in CASES:
            root = scratch / "tree"
            if root.exists():
                shutil.rmtree(root)
            make_tree(root)
            run = subprocess.run(
                [NODE, str(oracle), str(root)],
                input=json.dumps({"tool": tool, "params": params}),
                capture_output=True,
                text=True,
                env=env,
                cwd=root,
                check=True,
            )
            outcome = json.loads(run.stdout.replace(str(root), PLACE))
            results.append({"name": name, "tool": tool, "params": params, **outcome})
    OUT.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(results)} cases -> {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
