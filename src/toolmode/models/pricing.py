"""Cost of a request from a price table kept as data (`prices.json`), never a guess."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from typing import Any

from toolmode.usage import Usage


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    cache_hit: float
    cache_miss: float
    output: float

    def cost(self, usage: Usage) -> float:
        """Cost in USD of the given usage at this price."""
        miss = max(usage.prompt_tokens - usage.cached_tokens, 0)
        return (usage.cached_tokens * self.cache_hit + miss * self.cache_miss + usage.completion_tokens * self.output) / 1e6


class PriceTable:
    """Model name → price, with aliases and DeepSeek-style peak / off-peak windows."""

    def __init__(self, data: dict[str, Any] | None = None) -> None:
        if data is None:
            data = json.loads(resources.files("toolmode.models").joinpath("prices.json").read_text("utf-8"))
        self._models: dict[str, Any] = data.get("models", {})
        self._aliases: dict[str, str] = data.get("aliases", {})

    def lookup(self, model: str, at: datetime | None = None) -> Price | None:
        """The price of `model` at time `at` (default now), or None when the price is unknown."""
        key = self._canonical(model)
        entry = self._models.get(key) if key else None
        if entry is None:
            return None
        if "price" in entry:
            return Price(**entry["price"])
        at = at or datetime.now(UTC)
        at = at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)  # naive means UTC
        peak = at.weekday() < 5 and any(lo <= at.hour < hi for lo, hi in entry.get("peak_hours_utc", []))
        return Price(**entry["peak" if peak else "off_peak"])

    def cost(self, model: str, usage: Usage, at: datetime | None = None) -> float | None:
        """Cost in USD, or None when the model's price is unknown."""
        price = self.lookup(model, at)
        return None if price is None else price.cost(usage)

    def _canonical(self, model: str) -> str | None:
        # Router names such as "deepseek/deepseek-v4-flash" are not matched on purpose: a router's
        # price is its own (OpenRouter reports it in the usage, which takes precedence).
        name = model.strip().lower()
        if name in self._models:
            return name
        return self._aliases.get(name)
