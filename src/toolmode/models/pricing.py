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


SHAPE = (
    '{"models": {"my-model": {"price": {"cache_hit": 0.1, "cache_miss": 0.4, "output": 1.6}}}, '
    '"aliases": {"my-alias": "my-model"}} (USD per million tokens; a model may have "peak" and "off_peak" '
    'prices with "peak_hours_utc": [[1, 4]] instead of "price")'
)
_PRICE_KEYS = {"cache_hit", "cache_miss", "output"}


class PriceTable:
    """Model name → price, with aliases and DeepSeek-style peak / off-peak windows.

    `PriceTable()` loads the bundled `prices.json`; `PriceTable(data)` takes the same shape:
    `{"models": {name: {"price": {"cache_hit": .., "cache_miss": .., "output": ..}}}, "aliases": {..}}`,
    USD per million tokens. Any other shape is refused with a ValueError (a wrong shape would otherwise
    just leave every price unknown).
    """

    def __init__(self, data: dict[str, Any] | None = None) -> None:
        if data is None:
            data = json.loads(resources.files("toolmode.models").joinpath("prices.json").read_text("utf-8"))
        _check_table(data)
        self._models: dict[str, Any] = {k.strip().lower(): v for k, v in data.get("models", {}).items()}
        self._aliases: dict[str, str] = {k.strip().lower(): v.strip().lower()
                                         for k, v in data.get("aliases", {}).items()}

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


def _check_table(data: Any) -> None:
    """Raise ValueError unless `data` has the price table's shape (see SHAPE)."""
    def refuse(problem: str) -> None:
        raise ValueError(f"PriceTable: {problem}; expected {SHAPE}")

    if not isinstance(data, dict):
        refuse(f"the table must be a dict, got {type(data).__name__}")
    unknown = [k for k in data if k not in ("models", "aliases") and not str(k).startswith("_")]
    if unknown:
        refuse(f"unknown top-level key(s) {', '.join(map(repr, unknown))} (model names go under \"models\")")
    models, aliases = data.get("models", {}), data.get("aliases", {})
    if not isinstance(models, dict) or not isinstance(aliases, dict):
        refuse('"models" and "aliases" must be dicts')
    for name, entry in models.items():
        if not isinstance(entry, dict):
            refuse(f"model {name!r} must map to a dict")
        kinds = ["peak", "off_peak"] if "price" not in entry and ("peak" in entry or "off_peak" in entry) else ["price"]
        for kind in kinds:
            price = entry.get(kind)
            if not isinstance(price, dict) or set(price) != _PRICE_KEYS or not all(
                isinstance(v, int | float) and not isinstance(v, bool) and v >= 0 for v in price.values()
            ):
                refuse(f"model {name!r} needs {kind!r}: {{cache_hit, cache_miss, output}} (numbers >= 0), got {entry!r}")
    for alias, target in aliases.items():
        if not isinstance(target, str) or target.strip().lower() not in {k.strip().lower() for k in models}:
            refuse(f"alias {alias!r} points to {target!r}, which is not a model of the table")
