"""Shared fixtures: an isolated agent dir, the pi golden fixtures, tau as a program, and a guard against the network."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

import tau_process
from fixture_paths import fixtures_dir

# No test measures speed (bench/ does): a loaded 2-core machine must not fail an example on time.
settings.register_profile("tau", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("tau")


@pytest.fixture
def pi_fixtures() -> Path:
    found = fixtures_dir()
    if found is None:
        pytest.skip(
            "pi golden fixtures not found: set TAU_FIXTURES or place shared/fixtures/pi beside the checkout"
        )
    return found


@pytest.fixture(autouse=True)
def isolated_agent_dir(tmp_path_factory, monkeypatch):
    """Every test gets its own TAU_AGENT_DIR and HOME, so nothing touches the real ~/.tau."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("TAU_AGENT_DIR", str(home / ".tau" / "agent"))
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "TAU_FAUX_SCRIPT", "TAU_SESSION_DIR"):
        monkeypatch.delenv(var, raising=False)
    return home / ".tau" / "agent"


@pytest.fixture
def run_tau(tmp_path):
    """``run_tau(args, cwd=..., env=..., stdin=..., timeout=..., text=...)``: ``python -m tau`` run to the end.

    This checkout's ``src`` is imported, ``HOME`` and ``TAU_AGENT_DIR`` are the test's own (see
    :func:`isolated_agent_dir`), ``cwd`` defaults to ``tmp_path``; see :func:`tau_process.run_tau`.
    """

    def run(args, *, cwd=None, **options):
        return tau_process.run_tau(args, cwd=tmp_path if cwd is None else cwd, **options)

    return run


_real_connect = socket.socket.connect


def _loopback_only(self, address):
    host = address[0] if isinstance(address, tuple) else address
    if isinstance(host, str) and host not in ("127.0.0.1", "::1", "localhost") and not host.startswith("/"):
        raise RuntimeError(f"test tried to reach the network: {address!r} (only loopback is allowed)")
    return _real_connect(self, address)


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    monkeypatch.setattr(socket.socket, "connect", _loopback_only)
