"""Model access: an OpenAI-compatible client, endpoint presets and prices."""

from toolmode.models.client import ModelClient
from toolmode.models.errors import MissingApiKey, ModelError
from toolmode.models.presets import PRESETS, Preset, preset_for
from toolmode.models.pricing import Price, PriceTable
from toolmode.models.reply import Reply, ToolCall

__all__ = [
    "PRESETS",
    "MissingApiKey",
    "ModelClient",
    "ModelError",
    "Preset",
    "Price",
    "PriceTable",
    "Reply",
    "ToolCall",
    "preset_for",
]
