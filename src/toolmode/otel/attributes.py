"""The attribute values toolmode's spans and metrics carry, from the facts its events hold.

Names follow OpenTelemetry's GenAI semantic conventions v1.41.0 (the last release of
open-telemetry/semantic-conventions that holds them; they live on in semantic-conventions-genai).
toolmode's own facts (cost, steps, sandbox) are under `toolmode.*`.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from toolmode.models.presets import preset_for

SCHEMA_URL = "https://opentelemetry.io/schemas/1.41.0"
OTHER = "_OTHER"  # the conventions' error.type when no better name is known

# OpenAI's finish reasons -> the conventions' FinishReason values (gen-ai-output-messages.json)
_FINISH = {"tool_calls": "tool_call", "function_call": "tool_call"}
_ERROR_PREFIX = re.compile(r"Error: ([A-Za-z_][\w.]*)(?::|$)")


def endpoint(base_url: str | None) -> dict[str, Any]:
    """`server.address` and `server.port` of the model endpoint (empty when there is no URL)."""
    if not base_url:
        return {}
    try:
        parts = urlsplit(base_url)
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError:
        return {}
    if not parts.hostname:
        return {}
    return {"server.address": parts.hostname, **({"server.port": port} if port else {})}


def provider_name(base_url: str | None, chosen: str | None = None) -> str:
    """`gen_ai.provider.name`: the chosen name, else the toolmode preset whose URL the endpoint matches
    (`deepseek` and `openai` are the conventions' own values; the others are toolmode's names)."""
    if chosen:
        return chosen
    if not base_url:
        return "custom"
    name = preset_for(base_url=base_url).name
    return "llama.cpp" if name == "llamacpp" else name


def usage(counts: dict[str, Any]) -> dict[str, int]:
    """`gen_ai.usage.*` from toolmode's usage dict. Input tokens include the cached ones, as the
    conventions ask (and as the OpenAI and DeepSeek APIs count them)."""
    out = {
        "gen_ai.usage.input_tokens": int(counts.get("prompt_tokens") or 0),
        "gen_ai.usage.output_tokens": int(counts.get("completion_tokens") or 0),
        "gen_ai.usage.cache_read.input_tokens": int(counts.get("cached_tokens") or 0),
    }
    reasoning = int(counts.get("reasoning_tokens") or 0)
    if reasoning:
        out["gen_ai.usage.reasoning.output_tokens"] = reasoning
    return out


def finish_reason(reason: str | None, has_calls: bool) -> str:
    """The conventions' finish reason for an OpenAI one (None: `tool_call` when calls were made, else `stop`)."""
    if reason is None:
        return "tool_call" if has_calls else "stop"
    return _FINISH.get(reason, reason)


def tool_error_type(result: str) -> str:
    """`error.type` of a failed tool call from the text the model got (`Error: ValueError: ...`)."""
    found = _ERROR_PREFIX.match(result)
    return found.group(1) if found else OTHER


def summary(description: str | None) -> str | None:
    """The first line of a tool description (run_code's whole quick index would weigh on every span)."""
    if not description:
        return None
    return description.strip().splitlines()[0][:300] if description.strip() else None
