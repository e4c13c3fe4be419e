"""The file tree the grep, find and ls vectors run over (made the same way for pi and for tau).

A project folder marked as a git repository (a hand-made ``.git`` holding only ``HEAD`` and
``info/exclude``, so listings do not depend on the installed git), with ``.gitignore``d, ``.ignore``d
and excluded files, a nested ``.gitignore``, hidden files and folders, a binary file, a file with
more matches than the default cap, a line longer than grep's 500 characters, enough long matching
lines to pass the 50 KB cap, CRLF line ends, non-ASCII names, names that show the listing order, and links (one broken).
"""

from __future__ import annotations

from pathlib import Path

FILES: dict[str, bytes] = {
    ".git/HEAD": b"ref: refs/heads/main\n",
    ".git/info/exclude": b"excluded.md\n",
    ".gitignore": b"*.log\nbuild/\n!keep.log\n",
    ".ignore": b"secret.txt\n",
    ".env": b"TODO=1\n",
    ".hidden/config.txt": b"TODO hidden config\n",
    "README.md": b"hello world\nTODO: write docs\nHello again\n",
    "app.log": b"TODO in an ignored log\n",
    "keep.log": b"TODO in a whitelisted log\n",
    "build/out.txt": b"TODO in an ignored folder\n",
    "secret.txt": b"TODO in a file .ignore hides\n",
    "excluded.md": b"TODO in a file .git/info/exclude hides\n",
    "src/main.py": b"import util\n\n# TODO: main\ndef main():\n    return util.a_b()  # TODO later\n",
    "src/util.py": b"def a_b():\n    return 'a.b'  # axb\n",
    "src/long.txt": b"short line\n" + b"LONGMARK " + b"x" * 600 + b"\nafter\n",
    "src/data.bin": b"BINMARK before\x00after BINMARK\n",
    "src/crlf.txt": b"first\r\nCRLFMARK here\r\nlast\r\n",
    "src/\u00fcn\u00efc\u00f6de.txt": "TODO caf\u00e9 \U0001f600\n".encode(),
    "many.txt": b"".join(b"TODO %d\n" % n for n in range(1, 151)),
    "wide.txt": b"".join(b"WIDE %03d " % n + b"w" * 400 + b"\n" for n in range(1, 201)),
    "sub/nested/.gitignore": b"*.tmp\n",
    "sub/nested/a.tmp": b"TODO temp\n",
    "sub/nested/b.txt": b"TODO nested\n",
    "sub/Upper.TXT": b"TODO upper\n",
    "empty/.keep": b"",
    **{
        f"names/{name}": b""
        for name in (
            "a b.txt",
            "a_b.txt",
            "a-b.txt",
            "a.b.txt",
            "a1.txt",
            "ab.txt",
            "AB2.txt",
            "_x",
            "#y",
            "~z",
        )
    },
    **{f"names/{name}": b"" for name in ("\u00e9.txt", "e.txt", "f10", "f9", "Zeta", "zeta2", "\u00e8a")},
}
EMPTY_DIRS = ["emptydir"]
LINKS = {"links/to-sub": "../sub", "links/broken": "nowhere"}


def make_tree(root: Path) -> Path:
    """Write the tree under ``root`` (created); returns ``root``."""
    for name, data in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    for name in EMPTY_DIRS:
        (root / name).mkdir(parents=True, exist_ok=True)
    for name, target in LINKS.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).symlink_to(target)
    return root
