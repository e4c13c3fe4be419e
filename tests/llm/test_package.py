"""The public surface of tau.llm: lazy, light, and complete."""

from __future__ import annotations

import subprocess
import sys

import tau.llm


def test_import_is_light():
    code = (
        "import sys, tau.llm; from tau.llm import ModelRegistry, MessageBuilder, FauxProvider;"
        "ModelRegistry(env={}).get_all();"
        "heavy = sorted(m for m in ('anthropic', 'openai', 'httpx') if m in sys.modules);"
        "print(','.join(heavy))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""


def test_every_export_resolves():
    for name in tau.llm.__all__:
        assert getattr(tau.llm, name) is not None, name
