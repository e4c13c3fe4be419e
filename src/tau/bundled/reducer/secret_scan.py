"""Does a log hold a credential? Checked before anything is sent to the reducer's model.

Any finding means no reducer request. Two layers, each naming what it found (never the value):

1. **detect-secrets** (Yelp), the maintained list of token formats: every regex detector it ships
   (AWS keys, GitHub and GitLab tokens, Slack tokens and webhooks, private key blocks, JWTs, Stripe,
   npm, PyPI, ...; not its entropy or keyword heuristics, which flag every hash in a test log, nor its
   public-IP detector). Its import pulls in ``requests``, so it is loaded on the first check, never at
   start-up.
2. **tau's own rules** for what such detectors miss in logs: the seed's credential-looking assignment
   (``api_key=…``, ``Authorization: …``; ``config.LIKELY_SECRET``), ``NAME=value`` and quoted literals for secret-looking names
   (``DB_PASSWORD=…``, ``token="…"``), secret-looking keys in JSON or a Python dict repr
   (``"db_password": "…"``), ``password: …`` (YAML), credentials in a URL (``https://user:token@host``,
   ``redis://:token@host``), a secret on the line
   after its name (``aws_secret_access_key`` then the key), a bare ``Bearer <token>``, and model
   providers' key prefixes (``sk-ant-…``, ``sk-proj-…``). A masked or templated value (``****``,
   ``<redacted>``, ``${TOKEN}``) is no finding.

The text is scanned in blocks of whole lines of at most :data:`WINDOW` characters; a longer line is
cut into windows overlapping by :data:`OVERLAP`. So no detector's regex sees a giant line (one of
detect-secrets' backtracks quadratically on long lines full of ``//``), and a match up to
:data:`OVERLAP` characters long is never split.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

from tau.bundled.reducer.config import LIKELY_SECRET
from tau.common.dataclass import dataclass

__all__ = ["OVERLAP", "WINDOW", "find_secret"]

WINDOW = 1024
OVERLAP = 256

# detect-secrets' regex detectors that report something other than a credential.
_NOT_CREDENTIALS = frozenset({"IPPublicDetector"})

# A word that says a value is a secret, as the end of its key or variable name (the assignment follows
# at once): db_password, GITHUB_TOKEN, clientSecret, aws_secret_access_key, not "tokenizer", "max_tokens".
_SECRET_WORD = (
    r"(?:passw(?:or)?d|passphrase|pwd|secret|token|api{s}?key|access{s}?key|private{s}?key"
    r"|secret{s}?key|signing{s}?key|encryption{s}?key|credentials?|authorization|bearer)"
)
_WORD = _SECRET_WORD.format(s="[_-]?")
_SPACED_NAME = r"[A-Za-z0-9_. -]{0,40}?" + _SECRET_WORD.format(s="[ _-]?")
_NAME_NEEDLES = ("pass", "pwd", "secret", "token", "key", "credential", "authoriz", "bearer")
_VALUE_CHARS = r"[^\s\"'`,;(){}\[\]<>]"
# A quoted value up to the quote that opened it (group 2 of its rule).
_QUOTED_VALUE = r"(?P<value>(?:(?!\2)[^\n\\]|\\.){4,200}?)\2"


@dataclass(frozen=True)
class _Rule:
    """One of tau's rules.

    Attributes:
        kind: What the journal calls a finding.
        pattern: The regex; its ``value`` group, when there is one, is the would-be secret.
        needles: A block is searched only when its lower-case text holds one of these (most log blocks
            hold none, and a plain substring test is far cheaper than the regex).
        generated_only: Count only a value that looks generated (letters and digits): for rules that
            also match prose or code ("apiKey: must be a string", "api_key=api_key").
    """

    kind: str
    pattern: re.Pattern[str]
    needles: tuple[str, ...]
    generated_only: bool = False
    at_names: bool = False  # the pattern starts with the name: tried only where one is assigned
    check: Callable[[str], bool] | None = None  # what the value must also be (decoded, random)


# Where a secret-looking name is assigned: one scan for the rules that start with the name.
_ASSIGNED_NAME = re.compile(rf"{_WORD}(?=\\?[\"']?\s*[:=])", re.I)


def _named_value(pattern: str, *, generated_only: bool = False) -> _Rule:
    """A rule for a value assigned to a secret-looking name (the pattern starts with the name)."""
    return _Rule("Secret-Named Value", re.compile(pattern, re.I), _NAME_NEEDLES, generated_only, True)


_RULES: tuple[_Rule, ...] = (
    # api_key=…, Authorization: Bearer …, secret: "…" (the seed's rule)
    _Rule("Credential Assignment", LIKELY_SECRET, ("api", "authoriz", "bearer", "access", "secret"), True),
    # "db_password": "…" (JSON), 'api_key': '…' (a Python repr)
    _named_value(rf"{_WORD}([\"'])\s*:\s*([\"']){_QUOTED_VALUE}"),
    # {\"db_password\": \"…\"} (JSON inside a JSON string)
    _named_value(rf'{_WORD}\\"\s*:\s*\\"(?P<value>[^"\\\n]{{4,200}})\\"'),
    # token="…", password = '…' (the empty group keeps the quote as group 2)
    _named_value(rf"{_WORD}\s*=\s*()([\"']){_QUOTED_VALUE}"),
    # DB_PASSWORD=hunter2, --token=abc (environment and command-line style), password: hunter2 (YAML,
    # headers; not "secret::tests::…", a Rust path)
    _named_value(rf"{_WORD}(?:=|:[ \t]*(?!:))(?P<value>{_VALUE_CHARS}{{4,200}})", generated_only=True),
    # https://user:token@host, redis://:token@host (no user name)
    _Rule(
        "URL Credentials",
        re.compile(r"\b[a-z][a-z0-9+.-]{1,15}://[^\s:/?#@\"'<>]*:(?P<value>[^\s/?#@\"'<>]+)@[\w\[]", re.I),
        ("://",),
    ),
    # aws_secret_access_key\n  wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY
    _Rule(
        "Secret After Its Name",
        re.compile(
            rf"^[ \t]*[\"']?{_SPACED_NAME}[\"']?[ \t]*[:=]?[ \t]*\r?\n"
            r"[ \t]*[\"']?(?P<value>[A-Za-z0-9+/=_.~-]{16,200})[\"']?,?[ \t]*\r?$",
            re.I | re.M,
        ),
        _NAME_NEEDLES,
        True,
    ),
    # a secret alone on the line after a line that names one, in prose too ("Your AWS secret access
    # key (shown once):" then the key): long, letters and digits, and random (detect-secrets' entropy)
    _Rule(
        "Secret On The Next Line",
        re.compile(
            r"^[^\n]*\b(?:secrets?|passw(?:or)?ds?|passphrase|tokens?|credentials?|api[ _-]?keys?"
            r"|(?:access|private|secret|signing|encryption)[ _-]?keys?)\b[^\n]*\r?\n"
            r"[ \t]*[\"']?(?P<value>[A-Za-z0-9+/=_.~-]{20,200})[\"']?,?[ \t]*\r?$",
            re.I | re.M,
        ),
        ("secret", "pass", "token", "credential", "key"),
        True,
        check=lambda value: _random(value),
    ),
    # DigitalOcean personal access, OAuth and refresh tokens (doctl auth init --access-token dop_v1_…)
    _Rule("DigitalOcean Token", re.compile(r"(?<![\w-])do[opr]_v1_[a-f0-9]{64}(?![\w-])"), ("_v1_",)),
    # HashiCorp Vault: service, batch and recovery tokens; a legacy s.… token after vault login, in
    # VAULT_TOKEN or as the token row of vault login's table
    _Rule(
        "Vault Token",
        re.compile(
            r"(?<![\w.-])hv[sbr]\.[A-Za-z0-9_-]{20,}"
            r"|(?:\bvault\s+login\b(?:\s+-\S+)*\s+|\bVAULT_TOKEN\s*[=:]\s*[\"']?|^token[ \t]{2,})"
            r"(?P<value>s\.[A-Za-z0-9]{20,})",
            re.I | re.M,
        ),
        ("hvs.", "hvb.", "hvr.", "vault", "token"),
    ),
    # a .netrc entry: "machine api.heroku.com login me password <key>", on one line or several
    _Rule(
        "Netrc Password",
        re.compile(r"(?:^|[ \t])password[ \t]+(?P<value>[^\s\"'<>]{6,200})[ \t]*\r?$", re.I | re.M),
        ("password",),
        True,
        check=None,
    ),
    # a token, password or key passed as the next command-line word: --access-token X, --password X
    _Rule(
        "Command-Line Secret",
        re.compile(
            r"(?:^|\s)--?[\w-]*(?:token|passw(?:or)?d|secret|api-?key|access-?key)[ \t]+"
            r"[\"']?(?P<value>[^\s\"'<>|;&]{8,200})",
            re.I,
        ),
        ("token", "pass", "secret", "key"),
        True,
    ),
    # Docker's config.json: "auth": "<base64 of user:password>"
    _Rule(
        "Docker Registry Auth",
        re.compile(r"\\?\"auth\\?\"\s*:\s*\\?\"(?P<value>[A-Za-z0-9+/]{8,}={0,2})\\?\""),
        ('"auth',),
        check=lambda value: _basic_credentials(value),
    ),
    # a bare "Bearer <token>" (an Authorization header is a Credential Assignment)
    _Rule(
        "Bearer Token",
        re.compile(r"\bBearer[ \t]+(?P<value>[A-Za-z0-9._~+/-]{16,}=*)", re.I),
        ("bearer",),
        True,
    ),
    # Anthropic, OpenAI project/service keys, Google, Hugging Face, xAI, Groq, GitHub fine-grained
    _Rule(
        "Provider API Key",
        re.compile(
            r"(?<![\w-])(?:sk-ant-[\w-]{20,}|sk-(?:proj|svcacct|admin)-[\w-]{20,}|AIza[\w-]{35}"
            r"|hf_[A-Za-z0-9]{30,}|xai-[A-Za-z0-9]{40,}|gsk_[A-Za-z0-9]{40,}|github_pat_\w{40,})"
        ),
        ("sk-", "aiza", "hf_", "xai-", "gsk_", "github_pat_"),
    ),
)
# What a masked or templated value looks like: ****, <redacted>, ${TOKEN}, {{ token }}, $TOKEN.
_PLACEHOLDER = re.compile(
    r"^(?:[*x•.#_-]+|<[^<>]*>|\$\{[^{}]*\}|\{\{.*\}\}|%\(?\w+\)?s?|\$\w+"
    r"|redacted|hidden|masked|none|null|undefined|true|false|changeme)$",
    re.I,
)

_LETTER, _DIGIT = re.compile(r"[^\W\d_]"), re.compile(r"\d")
_LOWER, _UPPER = re.compile(r"[a-z]"), re.compile(r"[A-Z]")

_detectors: list[Any] | None = None


def _library_detectors() -> list[Any]:
    """Every regex detector detect-secrets ships (imported once, on the first check)."""
    global _detectors
    if _detectors is None:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.plugins.base import RegexBasedDetector

        # (the library declares its mapping's values with a type variable no caller can bind)
        classes: list[type[Any]] = list(get_mapping_from_secret_type_to_class().values())
        _detectors = [
            plugin()
            for plugin in classes
            if issubclass(plugin, RegexBasedDetector) and plugin.__name__ not in _NOT_CREDENTIALS
        ]
    return _detectors


def _windows(line: str) -> Iterator[str]:
    step = WINDOW - OVERLAP
    for start in range(0, max(len(line) - OVERLAP, 1), step):
        yield line[start : start + WINDOW]


def blocks(text: str) -> Iterator[str]:
    """``text`` as blocks of whole lines (consecutive blocks share a line) or windows of a long line."""
    block: list[str] = []
    size = 0
    for line in text.split("\n"):
        if len(line) > WINDOW:
            if block:
                yield "\n".join(block)
            block, size = [], 0
            yield from _windows(line)
            continue
        if block and size + len(line) + 1 > WINDOW:
            yield "\n".join(block)
            block, size = [block[-1]], len(block[-1]) + 1  # a name and the value on its next line
        block.append(line)
        size += len(line) + 1
    if block:
        yield "\n".join(block)


def _real_value(match: re.Match[str], rule: _Rule) -> bool:
    value = match.groupdict().get("value")
    if value is None:
        return True
    value = value.strip()
    if _PLACEHOLDER.match(value):
        return False
    if rule.generated_only and not _looks_generated(value):
        return False
    return rule.check is None or rule.check(value)


def _entropy(value: str) -> float:
    """Shannon entropy in bits per character: detect-secrets' own measure when it loads."""
    try:
        from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString

        return float(Base64HighEntropyString().calculate_shannon_entropy(value))
    except ImportError:  # the scan itself needs the library; this keeps the rule testable alone
        counts = Counter(value)
        return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def _random(value: str) -> bool:
    """A generated secret, not a word, a path or a repeated pattern: high entropy for its length."""
    if "/" in value.strip("/") and value.count("/") > 2 and not _DIGIT.search(value):
        return False  # a path
    return _entropy(value) >= min(4.0, math.log2(len(value)) - 0.6)


def _basic_credentials(value: str) -> bool:
    """Base64 that decodes to ``user:password`` (Docker's ``auth``)."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    user, colon, password = decoded.partition(":")
    return bool(colon and user and password)


def _looks_generated(value: str) -> bool:
    """Letters and digits, or a long mixed-case run (base64): what keys and tokens look like, not words."""
    if _LETTER.search(value) and _DIGIT.search(value):
        return True
    return len(value) >= 16 and bool(_LOWER.search(value)) and bool(_UPPER.search(value))


def _matches(rule: _Rule, block: str, names: list[int]) -> Iterator[re.Match[str]]:
    if not rule.at_names:
        yield from rule.pattern.finditer(block)
        return
    for start in names:
        match = rule.pattern.match(block, start)
        if match is not None:
            yield match


def _tau_finding(block: str) -> str | None:
    lower = block.lower()
    names: list[int] | None = None
    for rule in _RULES:
        if not any(needle in lower for needle in rule.needles):
            continue
        if rule.at_names and names is None:
            names = [match.start() for match in _ASSIGNED_NAME.finditer(block)]
        if any(_real_value(match, rule) for match in _matches(rule, block, names or [])):
            return rule.kind
    return None


def _library_finding(block: str) -> str | None:
    for detector in _library_detectors():
        for _ in detector.analyze_string(block):
            return str(detector.secret_type)
    return None


def find_secret(text: str) -> str | None:
    """The kind of the first credential in ``text`` (``"AWS Access Key"``, ``"URL Credentials"``…) or ``None``.

    Raises ``ImportError`` when detect-secrets cannot be loaded (the caller must not send the text).
    """
    for block in blocks(text):
        found = _tau_finding(block) or _library_finding(block)
        if found is not None:
            return found
    return None
