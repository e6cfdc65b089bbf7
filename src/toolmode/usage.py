"""Token usage of one request or a whole run, normalised across providers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass
class Usage:
    """Prompt, completion, cached (prompt tokens served from the provider's cache) and reasoning tokens."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    requests: int = 0

    def add(self, other: Usage) -> None:
        """Add another usage to this one in place."""
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cached_tokens += other.cached_tokens
        self.reasoning_tokens += other.reasoning_tokens
        self.requests += other.requests

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, int]:
        """Plain dict for JSON."""
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "cached_tokens": self.cached_tokens, "reasoning_tokens": self.reasoning_tokens,
                "requests": self.requests}

    @classmethod
    def from_api(cls, usage: Mapping[str, Any] | None) -> Usage:
        """Normalise a provider's `usage` object.

        DeepSeek reports cache hits as `prompt_cache_hit_tokens`; OpenAI, vLLM and llama.cpp as
        `prompt_tokens_details.cached_tokens`; reasoning tokens sit in `completion_tokens_details`.
        """
        if not usage:
            return cls(requests=1)
        prompt_details = usage.get("prompt_tokens_details") or {}
        completion_details = usage.get("completion_tokens_details") or {}
        cached = usage.get("prompt_cache_hit_tokens")
        if cached is None:
            cached = prompt_details.get("cached_tokens") or 0
        return cls(
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            cached_tokens=int(cached or 0),
            reasoning_tokens=int(completion_details.get("reasoning_tokens") or 0),
            requests=1,
        )
