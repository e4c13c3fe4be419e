"""Path spellings a model writes, resolved as pi resolves them."""

from __future__ import annotations

import os

import pytest

from tau.tools.paths import expand_path, resolve_read_path, resolve_to_cwd


def test_relative_absolute_and_dot_segments():
    assert resolve_to_cwd("a/../b.txt", "/proj") == "/proj/b.txt"
    assert resolve_to_cwd("/etc//hosts", "/proj") == "/etc/hosts"
    assert resolve_to_cwd("//x", "/proj") == "/x"
    assert resolve_to_cwd("dir/", "/proj") == "/proj/dir"


def test_at_prefix_home_and_unicode_spaces(monkeypatch):
    monkeypatch.setenv("HOME", "/home/u")
    assert expand_path("@src/a.py") == "src/a.py"
    assert expand_path("~") == "/home/u"
    assert expand_path("~/notes.md") == "/home/u/notes.md"
    assert expand_path("~other/x") == "~other/x"
    assert expand_path("a\u00a0b\u2003c\u3000d") == "a b c d"
    assert expand_path("@~/x") == "/home/u/x"


def test_file_urls():
    assert expand_path("file:///tmp/a%20b.txt") == "/tmp/a b.txt"
    assert expand_path("file://localhost/tmp/%C3%A9.txt") == "/tmp/é.txt"
    with pytest.raises(ValueError, match="must not include encoded / characters"):
        expand_path("file:///tmp/a%2Fb")
    with pytest.raises(ValueError, match='File URL host must be "localhost" or empty'):
        expand_path("file://server/share/x")


def test_read_variants_only_apply_when_the_typed_name_is_missing(tmp_path):
    (tmp_path / "Shot 1.00.00 PM.png").write_text("plain")
    (tmp_path / "Shot 1.00.00\u202fPM.png").write_text("narrow")
    assert resolve_read_path("Shot 1.00.00 PM.png", str(tmp_path)).endswith("Shot 1.00.00 PM.png")
    os.unlink(tmp_path / "Shot 1.00.00 PM.png")
    assert resolve_read_path("Shot 1.00.00 PM.png", str(tmp_path)).endswith("Shot 1.00.00\u202fPM.png")
    assert resolve_read_path("missing.txt", str(tmp_path)) == str(tmp_path / "missing.txt")
