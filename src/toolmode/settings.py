"""Settings in groups: the model, the mode, the sandbox, the limits, the output and the prompts.

`Agent(tools, mode=ModeSettings("hybrid", direct=["read_file"]), model=ModelSettings(preset="ollama"),
sandbox=SandboxSettings(persistent=True), limits=LimitSettings(max_steps=20), output=OutputSettings(console=True),
prompts=PromptSettings(variant="local"))`. The flat keywords of earlier versions (`base_url=`, `workspace=`,
`max_steps=`, ...) still work: `resolve_flat` puts each in its group and raises `SettingsConflict` when the
same setting is also given in a settings object. Defaults live here and in `toolmode.defaults`, nowhere else.
The command line and the bench build these same objects (`settings_from_options`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from toolmode.budget import Budget
from toolmode.defaults import (
    ACT_FIRST,
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_RESULT_CHARS,
    DEFAULT_MAX_STEPS,
    DEFAULT_REQUEST_TIMEOUT,
)
from toolmode.errors import SettingsConflict
from toolmode.telemetry import TelemetrySettings
from toolmode.telemetry import check as check_telemetry


@dataclass
class ModelSettings:
    """Which model, where, and how requests are made (see `ModelClient`). `max_tokens` caps each reply
    (OpenAI's `max_tokens`); `params` are further request fields, e.g. `{"temperature": 0}`. `act_first`: how
    a run that offers tools is made to start with a call, by what this endpoint supports ("schema",
    "tool_choice", "nudge", "off"; None: the preset's `Preset.act_first`; see `toolmode.act_first`)."""

    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    api_key_env: str | None = None
    preset: str | None = None
    stream: bool = False
    params: dict[str, Any] | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    recover_text_calls: bool = True
    recover_code_blocks: bool | None = None
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT
    deadline: float | None = None  # seconds a request may take, retries included (None: 300, or request_timeout if longer)
    idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT  # seconds a started stream may send nothing (None: no limit)
    act_first: str | None = None

    def __post_init__(self) -> None:
        check_count("max_tokens", self.max_tokens, none_ok=True)
        if self.act_first is not None and self.act_first not in ACT_FIRST:
            raise ValueError(f"unknown act_first {self.act_first!r}; choose one of: {', '.join(ACT_FIRST)}")
        check_number("request_timeout", self.request_timeout)
        idle = self.idle_timeout
        if idle is not None and (isinstance(idle, bool) or not isinstance(idle, (int, float)) or not idle > 0):
            raise ValueError(f"idle_timeout must be more than 0 seconds (or None for no limit), got {idle!r}")
        if self.temperature is not None:
            check_number("temperature", self.temperature, zero_ok=True)

    def request_params(self) -> dict[str, Any]:
        """The extra request fields: `params`, then `temperature` and `max_tokens` when set."""
        extra = {k: v for k, v in (("temperature", self.temperature), ("max_tokens", self.max_tokens)) if v is not None}
        return {**(self.params or {}), **extra}

    def build(self) -> Any:
        """A `ModelClient` with these settings."""
        from toolmode.models.client import ModelClient

        return ModelClient(
            self.model, base_url=self.base_url, api_key=self.api_key, api_key_env=self.api_key_env,
            preset=self.preset, stream=self.stream, params=self.request_params(),
            request_timeout=self.request_timeout, deadline=self.deadline, idle_timeout=self.idle_timeout,
            recover_text_calls=self.recover_text_calls, recover_code_blocks=self.recover_code_blocks,
        )


@dataclass
class ModeSettings:
    """Which mode, which tools it shows, and the mode's own options (react: `search`; hybrid: `direct`)."""

    name: str = "react"
    visible: Sequence[str] | None = None  # tools shown in the prompt; the rest are found by search
    ranker: str = "bm25"  # tool search: "bm25" or "fused" (BM25 + embeddings)
    options: Mapping[str, Any] = field(default_factory=dict)

    def __init__(self, name: str = "react", *, visible: Sequence[str] | None = None, ranker: str = "bm25",
                 options: Mapping[str, Any] | None = None, **mode_options: Any) -> None:
        self.name, self.visible, self.ranker = name, visible, ranker
        self.options = {**(options or {}), **mode_options}


@dataclass
class SandboxSettings:
    """Where model-written code works, and how it is confined. `workspace=None`: a private temporary
    folder made for the agent and removed when it closes (a library default that never exposes your files
    or toolmode's own code to the model's programs); the command line passes `--workspace` (default `.`)."""

    workspace: Path | str | None = None
    policy: str = "auto"  # "auto", "namespaces", "bwrap", "unshare", "landlock", "none" (unsafe)
    limits: Any = None  # a SandboxLimits
    persistent: bool = False  # keep the code namespace between run_code calls (and chat turns)
    allow_env_in_workspace: bool = False


@dataclass
class LimitSettings:
    """Every run's limits: steps, the cut of each tool result, and the budget (`max_cost` in USD,
    `max_total_tokens` prompt + completion over the run, `timeout` wall seconds). None: no limit."""

    max_steps: int = DEFAULT_MAX_STEPS
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS
    max_cost: float | None = None
    max_total_tokens: int | None = None
    timeout: float | None = None

    def __post_init__(self) -> None:
        check_count("max_steps", self.max_steps)
        check_count("max_result_chars", self.max_result_chars, zero_ok=True)
        self.budget()  # checks max_cost, max_total_tokens and timeout

    def budget(self) -> Budget:
        """The budget part, as the loop checks it."""
        return Budget(self.max_cost, self.max_total_tokens, self.timeout)


@dataclass
class OutputSettings:
    """What a run shows and writes. The library default is silent: no console, no trace file."""

    console: bool = False
    quiet: bool = False
    runs_dir: Path | str | None = None  # a directory for JSONL traces, e.g. "runs"
    sinks: Sequence[Any] = field(default_factory=list)  # extra trace sinks
    telemetry: bool | TelemetrySettings | None = None  # OpenTelemetry (None: instrument() / TOOLMODE_OTEL decide)

    def __post_init__(self) -> None:
        check_telemetry(self.telemetry)


@dataclass
class PromptSettings:
    """What the model is told: the variant of the prompt set ("standard", or "local": short, example-led
    prompts for small models; None: "local" for local presets), `overrides` (a mapping of prompt names to
    texts, or a folder of TOML files; see `toolmode.prompts`), `system_prompt` (replaces the mode's) and
    `instructions` (added to it)."""

    variant: str | None = None
    overrides: Mapping[str, str] | Path | str | None = None
    system_prompt: str | None = None
    instructions: str | None = None


# flat keyword -> (group, field in the group)
FLAT: dict[str, tuple[str, str]] = {
    **{k: ("model", k) for k in ("base_url", "api_key", "api_key_env", "preset", "stream", "recover_text_calls",
                                 "recover_code_blocks", "request_timeout", "idle_timeout", "max_tokens",
                                 "temperature", "act_first")},
    "model_params": ("model", "params"),
    "client": ("model", "client"),
    "search": ("mode", "search"),
    "direct": ("mode", "direct"),
    "visible": ("mode", "visible"),
    "ranker": ("mode", "ranker"),
    "workspace": ("sandbox", "workspace"),
    "persistent": ("sandbox", "persistent"),
    "sandbox_limits": ("sandbox", "limits"),
    "allow_env_in_workspace": ("sandbox", "allow_env_in_workspace"),
    **{k: ("limits", k) for k in ("max_steps", "max_result_chars", "max_cost", "max_total_tokens", "timeout")},
    **{k: ("output", k) for k in ("console", "quiet", "runs_dir", "sinks", "telemetry")},
    **{k: ("prompts", k) for k in ("system_prompt", "instructions")},
}
GROUP_TYPES = {"model": ModelSettings, "mode": ModeSettings, "sandbox": SandboxSettings, "limits": LimitSettings,
               "output": OutputSettings, "prompts": PromptSettings}
MAX_TOKENS_CHANGED = ("max_tokens now caps each reply, as OpenAI's max_tokens does (it was the whole run's "
                      "token budget): use max_total_tokens= for the budget; pass max_tokens in ModelSettings "
                      "to silence this warning")


@dataclass
class AgentSettings:
    """The six groups an Agent is built from (plus a ready `Model` object, when one was given)."""

    model: ModelSettings
    mode: ModeSettings
    sandbox: SandboxSettings
    limits: LimitSettings
    output: OutputSettings
    prompts: PromptSettings
    client: Any = None


def resolve(*, model: Any = None, mode: Any = "react", sandbox: Any = None, limits: Any = None, output: Any = None,
            prompts: Any = None, flat: Mapping[str, Any] | None = None) -> AgentSettings:
    """The Agent's groups from its arguments: a group given as an object, as a shorthand (`model="name"`,
    `mode="code"`, `sandbox="none"`, `prompts="local"`, or a `Model` object), and flat keywords, each in
    its group. A flat keyword whose group was given as an object raises SettingsConflict; any other keyword
    is one of the mode's own options (its `Options` refuses one it does not have, naming the mode)."""
    flat = dict(flat or {})
    mode_options = {k: flat.pop(k) for k in [k for k in flat if k not in FLAT]}  # checked by the mode's Options
    if "max_tokens" in flat:
        warnings.warn(MAX_TOKENS_CHANGED, FutureWarning, stacklevel=3)
    client = None
    if model is not None and not isinstance(model, (str, ModelSettings)):
        client, model = model, None
    given = {"model": model, "mode": mode, "sandbox": sandbox, "limits": limits, "output": output, "prompts": prompts}
    shorthand = {"model": "model", "mode": "name", "sandbox": "policy", "prompts": "variant"}
    groups: dict[str, Any] = {}
    for group, value in given.items():
        mine = {FLAT[k][1]: v for k, v in flat.items() if FLAT[k][0] == group}
        if group == "model" and "client" in mine:
            if client is not None:
                raise SettingsConflict("give either model=<a Model object> or client=, not both")
            client = mine.pop("client")
        if client is not None and group == "model" and mine:
            raise SettingsConflict(f"model= is a Model object: its settings ({', '.join(mine)}) belong to it, "
                                   "not to keywords")
        if group == "mode":
            mine.update(mode_options)
        groups[group] = _group(group, value, shorthand.get(group), mine)
    return AgentSettings(**groups, client=client)


def _group(group: str, value: Any, shorthand: str | None, flat: dict[str, Any]) -> Any:
    cls = GROUP_TYPES[group]
    if isinstance(value, cls):
        if flat:
            names = ", ".join(k for k, v in FLAT.items() if v[0] == group and v[1] in flat)
            raise SettingsConflict(f"give the {group} settings either as {cls.__name__} or as keywords, "
                                   f"not both ({names})")
        return value
    if value is not None and shorthand is None:
        raise TypeError(f"{group}= must be a {cls.__name__}, not {type(value).__name__}")
    if value is not None and not isinstance(value, str) and not (group == "prompts" and _is_overrides(value)):
        raise TypeError(f"{group}= must be a {cls.__name__} or a string, not {type(value).__name__}")
    if group == "prompts" and value is not None and not isinstance(value, str):
        flat["overrides"] = value
    elif value is not None:
        flat[shorthand] = value  # type: ignore[index]
    if group == "mode":
        options = {k: flat.pop(k) for k in [k for k in flat if k not in ("name", "visible", "ranker")]}
        return ModeSettings(**flat, options=options)
    return cls(**flat)


def _is_overrides(value: Any) -> bool:
    return isinstance(value, (Mapping, Path))


def settings_from_options(options: Mapping[str, Any]) -> tuple[ModelSettings, LimitSettings]:
    """The model and limit settings the command line and the bench share, from their option values
    (`model`, `base_url`, `api_key_env`, `preset`, `stream`, `temperature`, `max_tokens`, `request_timeout`,
    `idle_timeout`, `act_first`, `no_recover`, `max_steps`, `max_result_chars`, `max_cost`, `max_total_tokens`, `timeout`;
    absent or None: the default)."""
    def given(name: str) -> dict[str, Any]:
        value = options.get(name)
        return {} if value is None else {name: value}

    no_recover = bool(options.get("no_recover"))
    model = ModelSettings(
        **given("model"), **given("base_url"), **given("api_key"), **given("api_key_env"), **given("preset"),
        stream=bool(options.get("stream")), **given("temperature"), **given("max_tokens"),
        **given("request_timeout"), **given("idle_timeout"), **given("act_first"), recover_text_calls=not no_recover,
        recover_code_blocks=False if no_recover else None,
    )
    limits = LimitSettings(**given("max_steps"), **given("max_result_chars"), **given("max_cost"),
                           **given("max_total_tokens"), **given("timeout"))
    return model, limits


def with_changes(settings: Any, **changes: Any) -> Any:
    """A copy of a settings object with some fields changed (only the fields it has)."""
    names = {f.name for f in fields(settings)}
    return replace(settings, **{k: v for k, v in changes.items() if k in names})


def check_count(name: str, value: Any, *, none_ok: bool = False, zero_ok: bool = False) -> None:
    """ValueError naming `name` unless `value` is a whole number (>= 1, or >= 0 with `zero_ok`; None with `none_ok`)."""
    if value is None and none_ok:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    low = 0 if zero_ok else 1
    if value < low:
        raise ValueError(f"{name} must be {low} or more, got {value}")


def check_number(name: str, value: Any, *, zero_ok: bool = False) -> None:
    """ValueError naming `name` unless `value` is a finite number above 0 (or 0 with `zero_ok`)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    if value < 0 or (value == 0 and not zero_ok):
        raise ValueError(f"{name} must be more than 0, got {value!r} (leave it out for no limit)")
