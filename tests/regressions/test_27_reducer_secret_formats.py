"""Issue 27, item 4: five more secret formats never reach the reducer model.

Tried with logs the project had never seen, the secret filter let through a DigitalOcean token given
to ``doctl auth init --access-token``, a Vault token after ``vault login``, a Heroku key in a
``.netrc`` line (``password <uuid>``), a Docker ``config.json`` ``"auth"``, and an AWS secret key
alone on the line after the line naming it. Each is now a finding (tau's rules: detect-secrets has no
plugin for them; the next-line key is weighed with detect-secrets' entropy), so no request is made,
and the log stays in full. A log naming no secret is still reduced.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bundled" / "reducer"))

from reducer_fakes import FakeCtx, FakeRegistry, FakeTau, bash_event, failure_receipt

from tau.bundled.reducer.reducer import Reducer
from tau.bundled.reducer.secret_scan import find_secret
from tau.bundled.sol_common import SolSettings

# A deploy script's log in no format an extractor knows: it goes to the model tier.
NOISE = "".join(f"[deploy] step {n:03d}: syncing asset bundle {n * 7919 % 10007:05d}\n" for n in range(120))
FAILURE = "[deploy] error: rollout failed: 3 of 5 replicas unhealthy"
TAIL = f"{FAILURE}\n[deploy] giving up after 600s\n"

SECRETS = [
    (
        "digitalocean-doctl",
        "$ doctl auth init --access-token dop_v1_4f8a9c2e1b7d3f6a0c5e8b2d9f1a4c7e3b6d0f9a2c5e8b1d4f7a0c3e6b9d2f5a",
        "dop_v1_4f8a9c2e1b7d3f6a0c5e8b2d9f1a4c7e3b6d0f9a2c5e8b1d4f7a0c3e6b9d2f5a",
        "DigitalOcean Token",
    ),
    (
        "vault-login",
        "$ vault login hvs.CAESIJ7xQ2mK9pL4vR8tW1zY5bN3cF6hJ0aS2dG4kE7uM9qT3GiQKHGh2cy5aWVrUjFtTnJX\n"
        "Success! You are now authenticated.",
        "hvs.CAESIJ7xQ2mK9pL4vR8tW1zY5bN3cF6hJ0aS2dG4kE7uM9qT3GiQKHGh2cy5aWVrUjFtTnJX",
        "Vault Token",
    ),
    (
        "vault-login-legacy-table",
        "$ vault login s.Xk3mN9pQ2rT5vW8yZ1bC4dF7\nKey                  Value\n---                  -----\n"
        "token                s.Xk3mN9pQ2rT5vW8yZ1bC4dF7\ntoken_policies       [default]",
        "s.Xk3mN9pQ2rT5vW8yZ1bC4dF7",
        "Vault Token",
    ),
    (
        "heroku-netrc",
        "$ cat ~/.netrc\nmachine api.heroku.com\n  login dev@example.com\n  password 01234567-89ab-cdef-0123-456789abcdef",
        "01234567-89ab-cdef-0123-456789abcdef",
        "Netrc Password",
    ),
    (
        "heroku-netrc-one-line",
        "machine git.heroku.com login dev@example.com password 3f9c1e7a-5b2d-4c8e-9a1f-6d0b2e4c7a9f",
        "3f9c1e7a-5b2d-4c8e-9a1f-6d0b2e4c7a9f",
        "Netrc Password",
    ),
    (
        "docker-config-auth",
        '$ cat ~/.docker/config.json\n{\n  "auths": {\n    "registry.example.com": {\n'
        '      "auth": "ZGV2OnMzY3IzdC1wYXNzd29yZC0xMjM="\n    }\n  }\n}',
        "ZGV2OnMzY3IzdC1wYXNzd29yZC0xMjM=",
        "Docker Registry Auth",
    ),
    (
        "aws-secret-on-the-next-line",
        "Created access key AKIA-style id for ci-bot.\nYour AWS secret access key (shown only once):\n"
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY8q",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY8q",
        "Secret On The Next Line",
    ),
    (
        "token-on-the-next-line",
        "Store this API token for the deploy bot, it will not be shown again\n  "
        "9fK2mQ7xR4tB8wZ1cN5vL3pH6jD0sG2aYe",
        "9fK2mQ7xR4tB8wZ1cN5vL3pH6jD0sG2aYe",
        "Secret On The Next Line",
    ),
]


def _log_with(text: str) -> str:
    return NOISE + text + "\n" + TAIL + "\n\nCommand exited with code 1"


def _reducer(tmp_path: Path, *replies):
    tau = FakeTau()
    ctx = FakeCtx(str(tmp_path), FakeRegistry(replies=list(replies)))
    return tau, ctx, Reducer(tau, SolSettings(evidence_preserving_reducer=True))


@pytest.mark.parametrize(("text", "secret", "kind"), [s[1:] for s in SECRETS], ids=[s[0] for s in SECRETS])
def test_the_secret_never_reaches_a_reducer_request(tmp_path, text, secret, kind):
    tau, ctx, reducer = _reducer(tmp_path, failure_receipt(FAILURE))
    assert find_secret(text) == kind
    event = bash_event("make deploy", _log_with(text), is_error=True)
    assert asyncio.run(reducer.on_tool_result(event, ctx)) is None  # the log stays, in full
    assert ctx.model_registry.calls == []
    fallback = tau.journal()[-1]
    assert (fallback["reason"], fallback["finding"]) == ("likely-secret", kind)
    assert secret not in json.dumps(tau.entries)


def test_a_log_that_names_no_secret_still_reaches_the_reducer(tmp_path):
    tau, ctx, reducer = _reducer(tmp_path, failure_receipt(FAILURE))
    text = "token refresh scheduled\npassword policy: length 12\nsecret rotation: 30 days\nauth ok"
    event = bash_event("make deploy", _log_with(text), is_error=True)
    result = asyncio.run(reducer.on_tool_result(event, ctx))
    assert len(ctx.model_registry.calls) == 1 and result is not None
    assert json.dumps(FAILURE) in result["content"][0]["text"]
    assert tau.kinds()[-1] == "applied"


@pytest.mark.parametrize(
    "text",
    [
        "FAILED tests/test_token.py::test_refresh - AssertionError: assert 1 == 2",
        "test_token_roundtrip PASSED\n3f2a9c1e7b5d4a8f6c2e9b1d7a3f5c8e2b4d6a9f",
        "E   ValueError: password must be at least 8 characters",
        'docker: {"auth": "none"}',
        "Secret scanning found nothing.\nsha256:9f86d081884c7d659a2feaea0c55ad015a3bf4b1b2b0b822cd15d6c15b0f00a0",
        "Tokens used:\n  1234567890123456789012",
        "The API key below is a placeholder:\n  <your-key-here>",
        "cargo build --max-tokens 2048 --release",
    ],
    ids=[
        "token-test-id",
        "token-test-then-sha",
        "password-prose",
        "docker-auth-word",
        "hash",
        "digits",
        "placeholder",
        "flag",
    ],
)
def test_look_alikes_are_not_secrets(text):
    assert find_secret(text) is None
