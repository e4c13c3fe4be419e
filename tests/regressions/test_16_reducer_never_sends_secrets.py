"""Issue 16, item 1: no secret in a log reaches the Evidence-Preserving Reducer's model.

7 of 10 common formats went to the reducer request verbatim; the seed's check only matched
``NAME=value``. Now detect-secrets and tau's own rules look at the command and the log first: any
finding means no request, the original result stays, and the journal names the kind of finding,
never the value. Ordinary logs (hex hashes, UUIDs, paths, test names with "secret" or "token" in
them) are still reduced.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bundled" / "reducer"))

from reducer_fakes import FakeCtx, FakeRegistry, FakeTau, bash_event, failure_receipt

from tau.bundled.reducer import secret_scan
from tau.bundled.reducer.reducer import Reducer
from tau.bundled.reducer.secret_scan import OVERLAP, WINDOW, blocks, find_secret
from tau.bundled.sol_common import SolSettings

PASSED = "".join(f"tests/test_mod{n:03d}.py::test_case PASSED\n" for n in range(150))
FAILURE = "E   AssertionError: assert add(2, 3) == 5"
TAIL = f"{FAILURE}\nFAILED tests/test_calc.py::test_add\n1 failed, 150 passed in 0.42s\n"

# The ten formats of the issue: (name, text a log may carry, the secret in it, the finding's kind).
SECRETS = [
    (
        "aws-access-key-id",
        "botocore.exceptions.ClientError: InvalidClientTokenId: AKIAZ7SQ2N4XKDT6WB3Q",
        "AKIAZ7SQ2N4XKDT6WB3Q",
        "AWS Access Key",
    ),
    (
        "anthropic-key",
        "anthropic.AuthenticationError: invalid x-api-key sk-ant-api03-Q2hM5rT8wX1zB4dF7gJ0kL3nP6qS9uV2yA5cE8hK1mN4pR7tW0zC3fH6jL9o-AbC12DeAA",
        "sk-ant-api03-Q2hM5rT8wX1zB4dF7gJ0kL3nP6qS9uV2yA5cE8hK1mN4pR7tW0zC3fH6jL9o-AbC12DeAA",
        "Provider API Key",
    ),
    (
        "pem-private-key",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB\n"
        "aQ4FZ5fKa1bN3sQ8vV2xW7yT0uR6iO9pL4kJ3hG2fD1sA5zX8cV7bN6mM5lK4jH\n-----END RSA PRIVATE KEY-----",
        "MIIEpAIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB",
        "Private Key",
    ),
    (
        "github-token",
        "remote: Invalid username or token. ghp_R8mK2vX9qT4wZ7nB3cF6hJ1lP5sD0gY8aE2u used",
        "ghp_R8mK2vX9qT4wZ7nB3cF6hJ1lP5sD0gY8aE2u",
        "GitHub Token",
    ),
    (
        "url-credentials",
        "fatal: unable to access 'https://deploy:Zq81xVt4Rw9Lm2Kp@git.example.com/team/repo.git/': 403",
        "Zq81xVt4Rw9Lm2Kp",
        "URL Credentials",
    ),
    (
        "slack-bot-token",
        "slack_sdk.errors.SlackApiError: invalid_auth for xoxb-2468013579-1357924680-Yk3Lm8Np2Qr7St1Uv6Wx0Za",
        "xoxb-2468013579-1357924680-Yk3Lm8Np2Qr7St1Uv6Wx0Za",
        "Slack Token",
    ),
    (
        "slack-webhook",
        "POST https://hooks.slack.com/services/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 failed: 404",
        "q9W8e7R6t5Y4u3I2o1P0aSdF",
        "Slack Token",
    ),
    (
        "json-db-password",
        'E   AssertionError: config mismatch {"host": "db.internal", "db_password": "v3ry-Secr3t-Pa55"}',
        "v3ry-Secr3t-Pa55",
        "Secret-Named Value",
    ),
    (
        "aws-secret-on-next-line",
        "[profile ci]\naws_secret_access_key\n    kR9tV2wX5zA8cE1gH4jL7nP0qS3uW6yB9dF2hK5m\n",
        "kR9tV2wX5zA8cE1gH4jL7nP0qS3uW6yB9dF2hK5m",
        "Secret After Its Name",
    ),
    (
        "name-equals-value",
        "environment: API_KEY=sk-live-4f9a8b7c6d5e",
        "sk-live-4f9a8b7c6d5e",
        "Credential Assignment",
    ),
]


def _log_with(text: str) -> str:
    return PASSED + text + "\n" + TAIL


def _reducer(tmp_path: Path, *replies):
    tau = FakeTau()
    ctx = FakeCtx(str(tmp_path), FakeRegistry(replies=list(replies)))
    reducer = Reducer(tau, SolSettings(evidence_preserving_reducer=True, evidence_extractors=False))
    return tau, ctx, reducer


@pytest.mark.parametrize(("text", "secret", "kind"), [s[1:] for s in SECRETS], ids=[s[0] for s in SECRETS])
def test_each_secret_format_blocks_the_reducer_request(tmp_path, text, secret, kind):
    tau, ctx, reducer = _reducer(tmp_path, failure_receipt(FAILURE))
    event = bash_event("pytest -q", _log_with(text) + "\n\nCommand exited with code 1", is_error=True)
    assert asyncio.run(reducer.on_tool_result(event, ctx)) is None  # the original result stays
    assert ctx.model_registry.calls == []  # no reducer request at all
    (fallback,) = tau.journal()
    assert (fallback["kind"], fallback["reason"], fallback["finding"]) == ("fallback", "likely-secret", kind)
    assert secret not in json.dumps(tau.entries)  # the journal names the kind, never the value
    assert not (tmp_path / "sol").exists()  # nor is the log archived


def test_a_secret_in_the_command_blocks_the_request_too(tmp_path):
    tau, ctx, reducer = _reducer(tmp_path, failure_receipt(FAILURE))
    command = "GITHUB_TOKEN=ghp_R8mK2vX9qT4wZ7nB3cF6hJ1lP5sD0gY8aE2u pytest -q"
    event = bash_event(command, _log_with("") + "\n\nCommand exited with code 1", is_error=True)
    assert asyncio.run(reducer.on_tool_result(event, ctx)) is None
    assert ctx.model_registry.calls == [] and tau.journal()[0]["reason"] == "likely-secret"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("database:\n  host: db.internal\n  password: hunter2horse\n", "Secret-Named Value"),
        ("GITHUB_TOKEN: 0123abcd4567ef89\n", "Secret-Named Value"),
        ("redis.exceptions.AuthenticationError: redis://:p4ssw0rdXYZ@cache:6379/0", "URL Credentials"),
    ],
    ids=["yaml-password", "yaml-token", "url-without-user"],
)
def test_more_formats_tau_s_rules_catch(text, kind):
    assert find_secret(_log_with(text)) == kind


@pytest.mark.parametrize(
    "text",
    [
        '{"password": "********", "token": "<redacted>", "client_secret": "${CLIENT_SECRET}"}',
        "E   ValueError: password: must be at least 8 characters; token: 12",
        "test secret::tests::rotates_every_hour ... ok\ntoken: ***\npassword: changeme",
        "DB_PASSWORD=$DB_PASSWORD pytest",
        "E   ValueError: providers.local.apiKey: must be a non-empty string",
        "FAILED tests/test_auth_secret.py::test_bearer_token - AssertionError: assert 'password' == 'secret'",
        "test auth::bearer::tests::token_roundtrip ... FAILED",
        "    password = get_password()\n    token = os.environ['TOKEN']\n    api_key=api_key,",
        '{"max_tokens": 1024, "tokenizer": "gpt2", "password_policy": {"min_length": 8}}',
        "GET https://user@example.com/x 200; http://localhost:8000/api?page=2",
    ],
    ids=[
        "masked",
        "yaml-prose",
        "yaml-masked",
        "reference",
        "prose",
        "pytest-ids",
        "cargo-ids",
        "code",
        "json-keys",
        "urls",
    ],
)
def test_look_alikes_are_no_finding(text):
    assert find_secret(text) is None


def _real_pytest_log(tmp_path: Path) -> str:
    """The output of a real failing pytest run full of hashes, UUIDs and paths."""
    lines = [
        f"{hashlib.sha256(str(n).encode()).hexdigest()} {uuid.UUID(int=n * 7919)} "
        f"{tmp_path}/build/{hashlib.sha1(str(n).encode()).hexdigest()[:12]}/cache.db"
        for n in range(60)
    ]
    (tmp_path / "test_hashes.py").write_text(
        "import hashlib, uuid\n"
        f"LINES = {lines!r}\n"
        "def test_token_cache_paths():\n"
        "    for line in LINES:\n"
        "        print(line)\n"
        "    digest = hashlib.sha256(b'secret-rotation').hexdigest()\n"
        "    assert digest == '3f786850e387550fdab836ed7e6dc881de23001b', uuid.uuid5(uuid.NAMESPACE_DNS, 'x')\n"
        "def test_api_key_header_is_sent():\n"
        "    assert 1 == 1\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-vv", "-p", "no:cacheprovider", "test_hashes.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTEST_ADDOPTS": ""},
    )
    assert done.returncode == 1, done.stdout + done.stderr
    return done.stdout


CARGO_LOG = """\
   Compiling auth-token v0.3.1 (/home/dev/src/auth-token)
    Finished `test` profile [unoptimized + debuginfo] target(s) in 4.21s
     Running unittests src/lib.rs (target/debug/deps/auth_token-9f86d081884c7d65)

running 4 tests
test secret::tests::rotates_every_hour ... ok
test bearer::tests::parses_header ... ok
test tests::it_works ... FAILED
test token::tests::roundtrip_0190a1b2_c3d4_7e5f ... ok

failures:

---- tests::it_works stdout ----
thread 'tests::it_works' panicked at src/lib.rs:5:29:
assertion `left == right` failed: cache key 3f786850e387550fdab836ed7e6dc881de23001b
  left: 4
 right: 5
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace

failures:
    tests::it_works

test result: FAILED. 3 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

error: test failed, to rerun pass `--lib`
"""


def test_ordinary_pytest_and_cargo_logs_are_still_reduced(tmp_path):
    pytest_log = _real_pytest_log(tmp_path)
    assert "3f786850e387550fdab836ed7e6dc881de23001b" in pytest_log and "test_token_cache_paths" in pytest_log
    assert find_secret(pytest_log) is None
    assert find_secret(CARGO_LOG * 20) is None
    log = _log_with(pytest_log)
    tau, ctx, reducer = _reducer(tmp_path / "session", failure_receipt(FAILURE))
    event = bash_event("python -m pytest -vv", log + "\n\nCommand exited with code 1", is_error=True)
    result = asyncio.run(reducer.on_tool_result(event, ctx))
    assert len(ctx.model_registry.calls) == 1 and tau.kinds()[-1] == "applied"
    assert result["content"][0]["text"].startswith("sol_pi_evidence_receipt_v1")


def test_no_scanner_means_no_request(tmp_path, monkeypatch):
    def unavailable():
        raise ImportError("No module named 'detect_secrets'")

    monkeypatch.setattr(secret_scan, "_library_detectors", unavailable)
    tau, ctx, reducer = _reducer(tmp_path, failure_receipt(FAILURE))
    event = bash_event("pytest -q", _log_with("") + "\n\nCommand exited with code 1", is_error=True)
    assert asyncio.run(reducer.on_tool_result(event, ctx)) is None
    assert ctx.model_registry.calls == []
    assert tau.journal()[0]["reason"] == "secret-scan-unavailable"
    assert "detect_secrets" in tau.journal()[0]["error"]


def test_detect_secrets_is_loaded_only_when_a_candidate_is_checked():
    child = (
        "import sys\n"
        "import tau.bundled.reducer.reducer\n"
        "from tau.bundled.reducer.secret_scan import find_secret\n"
        "before = 'detect_secrets' in sys.modules\n"
        "found = find_secret('key AKIAZ7SQ2N4XKDT6WB3Q')\n"
        "print(before, 'detect_secrets' in sys.modules, found)\n"
    )
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["False", "True", "AWS", "Access", "Key"], done.stderr


def test_a_giant_line_is_scanned_in_bounded_overlapping_windows():
    secret = "AKIAZ7SQ2N4XKDT6WB3Q"
    line = "a://b:" * 2000
    pieces = list(blocks(line + "\nshort line\n" + "x" * 5000))
    assert max(len(piece) for piece in pieces) <= WINDOW
    for position in range(0, len(line) - len(secret), 997):  # wherever a secret sits, one window holds it
        text = line[:position] + secret + line[position:]
        assert any(secret in piece for piece in blocks(text)), position
        assert find_secret(text) == "AWS Access Key"
    assert OVERLAP >= 256  # longer than any single token the detectors look for
