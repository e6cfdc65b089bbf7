"""Credentials never reach a file the host writes: traces, bench settings and results, reports.

These files usually lie inside the workspace (`./runs`), where the model's code can read them, so every
text the host writes there goes through `redact` first (`hostfiles` calls it: the one place). Removed:

- the userinfo of any URL (`https://user:sk-...@host/v1` -> `https://[REDACTED]@host/v1`);
- the values of `Authorization` / `Proxy-Authorization` / `api-key`-style headers or keys, and any
  `Bearer <token>`;
- known key shapes: `sk-...` (OpenAI, DeepSeek, Anthropic, OpenRouter), GitHub, GitLab, Slack, AWS
  access key ids, Google API keys, Hugging Face and Groq tokens;
- the values of the API-key environment variables in use: the presets' variables, any variable whose
  name ends in API_KEY, _TOKEN, _SECRET or _PASSWORD, and every key a model client was given
  (`remember`); values of at least 16 characters without spaces (shorter ones would garble text).

Every pattern is linear in the text (bounded repetitions, literal prefixes), since the text is
model- and web-controlled. Redaction keeps JSON valid: no pattern consumes a quote or a backslash.
"""

from __future__ import annotations

import os
import re
import threading
from typing import Any

REDACTED = "[REDACTED]"
# Shorter values (and values with spaces) are not treated as literal secrets: replacing them everywhere
# would garble ordinary text (a test's api_key="scripted" is a word of the bench's own records).
_MIN_SECRET = 16
_ENV_SECRET = re.compile(r"(?:API_?KEY|_TOKEN|_SECRET|_PASSWORD|_ACCESS_KEY)$", re.IGNORECASE)
_PRESET_ENV = ("DEEPSEEK_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "ANTHROPIC_API_KEY")

_VALUE = r"[^\s\"'\\,;)}\]<>]{4,}"  # a header's or key's value, up to the next delimiter
_PATTERNS = re.compile(
    "|".join((
        # scheme://userinfo@ : the scheme and the userinfo are bounded, so each start costs O(1)
        r"(?P<url>\b[A-Za-z][A-Za-z0-9+.\-]{0,30}://)[^\s/?#@\"'\\<>]{1,1024}@",
        # Authorization: Bearer x / "api-key": "x" / api_key=x (as header, JSON key, dict repr or option)
        r"(?P<header>(?i:\b(?:proxy-)?authorization|\bx-api-key|\bapi[-_]?key|\bx-goog-api-key|\baccess_token"
        r"|\bclient_secret|\bsecret_key)[\"']?\s{0,3}[:=]\s{0,3}[\"']?(?:(?i:bearer|basic|token)\s{1,3})?)" + _VALUE,
        r"(?P<bearer>(?i:\bbearer)\s{1,3})[A-Za-z0-9._~+/=\-]{8,}",
        # known key shapes, not inside a longer word
        r"(?<![A-Za-z0-9_-])(?:sk-[A-Za-z0-9_\-]{16,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{20,}"
        r"|glpat-[A-Za-z0-9_\-]{20,}|xox[abprs]-[A-Za-z0-9\-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_\-]{35}"
        r"|hf_[A-Za-z0-9]{30,}|gsk_[A-Za-z0-9]{20,})",
    ))
)

_remembered: set[str] = set()
_lock = threading.Lock()
# secrets_in_use() for one state of the environment and of `_remembered` (it is asked for every line written)
_cache: tuple[dict[Any, Any], list[str]] | None = None


def remember(secret: str | None) -> None:
    """Treat `secret` (e.g. the API key a model client was given) as a credential from now on."""
    global _cache
    if secret and _secret_like(secret.strip()):
        with _lock:
            _remembered.add(secret.strip())
            _cache = None


def _secret_like(value: str) -> bool:
    return len(value) >= _MIN_SECRET and not any(c.isspace() for c in value)


def secrets_in_use() -> list[str]:
    """The literal secrets redacted: remembered ones and the values of API-key-like environment variables,
    longest first (so a key that contains another is replaced whole). Worked out again only when the
    environment changed (a snapshot of its raw items is compared, in C: decoding every variable for every
    line written cost more than the rest of a step)."""
    global _cache
    raw = getattr(os.environ, "_data", None)
    state = raw if isinstance(raw, dict) else os.environ
    cached = _cache
    if cached is not None and cached[0] == state:  # a dict compare, in C
        return cached[1]
    with _lock:
        found = _scan()
        _cache = (dict(state), found)
    return found


def _scan() -> list[str]:
    found = set(_remembered)
    for name, value in os.environ.items():
        if (name in _PRESET_ENV or _ENV_SECRET.search(name)) and _secret_like(value.strip()):
            found.add(value.strip())
    return sorted(found, key=len, reverse=True)


def _replace(match: re.Match[str]) -> str:
    for group in ("url", "header", "bearer"):
        prefix = match.group(group)
        if prefix is not None:
            return f"{prefix}{REDACTED}@" if group == "url" else prefix + REDACTED
    return REDACTED


# Every branch of _PATTERNS needs one of these (lowercased) in the text: a line without any is left alone
# without running the pattern, which tries every branch at every position (~60 us for a 250-character line,
# more than the rest of a step's trace writing).
_TRIGGERS = ("://", "authorization", "api", "access_token", "secret", "bearer", "sk-", "ghp_", "gho_", "ghu_",
             "ghs_", "ghr_", "github_pat_", "glpat-", "xox", "akia", "aiza", "hf_", "gsk_")
_TRIGGER = re.compile("|".join(map(re.escape, _TRIGGERS)))


def redact(text: str) -> str:
    """`text` with every credential it holds replaced by `[REDACTED]` (see the module's docstring)."""
    for secret in secrets_in_use():
        if secret in text:
            text = text.replace(secret, REDACTED)
    if _TRIGGER.search(text.lower()) is None:
        return text
    return _PATTERNS.sub(_replace, text)


def redact_url(url: str | None) -> str | None:
    """A URL without its userinfo (for settings saved to disk and for messages)."""
    return None if url is None else redact(url)
