"""Endpoint presets: base URL, default model, API key variable and behaviour switches per provider."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Preset:
    """Where a provider lives and how it behaves."""

    name: str
    base_url: str
    model: str
    api_key_env: str | None  # None: the server needs no key (local servers)
    local: bool = False  # local servers: small models, so text-written calls and code are recovered by default
    # The same HTTP 500 twice in a row ends the request: llama.cpp, vLLM and Ollama answer 500 when they cannot
    # render a conversation (a chat template that rejects it), and that does not change on a retry. Hosted
    # APIs answer 500 for passing trouble, so there a 500 is retried like a 502 or 503.
    repeated_500_is_final: bool = False


PRESETS: dict[str, Preset] = {
    "deepseek": Preset("deepseek", "https://api.deepseek.com", "deepseek-v4-flash", "DEEPSEEK_API_KEY"),
    "openai": Preset("openai", "https://api.openai.com/v1", "gpt-4o-mini", "OPENAI_API_KEY"),
    "openrouter": Preset("openrouter", "https://openrouter.ai/api/v1", "deepseek/deepseek-v4-flash", "OPENROUTER_API_KEY"),
    "ollama": Preset("ollama", "http://127.0.0.1:11434/v1", "qwen2.5-coder:7b", None, local=True,
                     repeated_500_is_final=True),
    "vllm": Preset("vllm", "http://127.0.0.1:8000/v1", "Qwen/Qwen2.5-Coder-7B-Instruct", None, local=True,
                   repeated_500_is_final=True),
    "llamacpp": Preset("llamacpp", "http://127.0.0.1:8080/v1", "default", None, local=True,
                       repeated_500_is_final=True),
}
DEFAULT_PRESET = "deepseek"


def preset_for(name: str | None = None, base_url: str | None = None) -> Preset:
    """The named preset; else the one whose base URL matches `base_url`; else a generic local-style one.

    A bare `base_url` that matches no preset gets the generic "custom" preset: no API key required
    unless one is given, since most self-hosted servers take none.
    """
    if name:
        key = name.lower().replace(".", "").replace("-", "").replace("_", "")
        aliases = {"llamacppserver": "llamacpp", "llama": "llamacpp"}
        key = aliases.get(key, key)
        if key not in PRESETS:
            raise ValueError(f"unknown preset {name!r}; choose one of: {', '.join(PRESETS)}")
        return PRESETS[key]
    if base_url is None:
        return PRESETS[DEFAULT_PRESET]
    normalized = base_url.rstrip("/")
    for preset in PRESETS.values():
        if normalized in (preset.base_url, preset.base_url.removesuffix("/v1")):
            return preset
    return Preset("custom", base_url, "default", None, local=False)
