"""Settings objects that group `Agent`'s keyword arguments: the model, the sandbox, the output.

`Agent(tools, model=ModelSettings(preset="ollama", model="qwen3"), sandbox=SandboxSettings(persistent=True),
output=OutputSettings(console=True))` is the same as the flat keyword form, which keeps working.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolmode.defaults import DEFAULT_IDLE_TIMEOUT


@dataclass
class ModelSettings:
    """Which model, where, and how requests are made (see `ModelClient`)."""

    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    api_key_env: str | None = None
    preset: str | None = None
    stream: bool = False
    params: dict[str, Any] | None = None  # extra request fields, e.g. {"temperature": 0}
    recover_text_calls: bool = True
    recover_code_blocks: bool | None = None
    request_timeout: float = 120.0
    deadline: float | None = None  # seconds a request may take, retries included (None: 300, or request_timeout if longer)
    idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT  # seconds a started stream may send nothing (None: no limit)

    def build(self) -> Any:
        """A `ModelClient` with these settings."""
        from toolmode.models.client import ModelClient

        return ModelClient(
            self.model, base_url=self.base_url, api_key=self.api_key, api_key_env=self.api_key_env,
            preset=self.preset, stream=self.stream, params=self.params, request_timeout=self.request_timeout,
            deadline=self.deadline, idle_timeout=self.idle_timeout, recover_text_calls=self.recover_text_calls,
            recover_code_blocks=self.recover_code_blocks,
        )


@dataclass
class SandboxSettings:
    """Where model-written code and the file tools work, and how the code is confined."""

    workspace: Path | str = "."
    policy: str = "auto"  # "auto", "namespaces", "bwrap", "unshare", "landlock", "none" (unsafe)
    limits: Any = None  # a SandboxLimits
    persistent: bool = False  # keep the code namespace between run_code calls (and chat turns)
    allow_env_in_workspace: bool = False


@dataclass
class OutputSettings:
    """What a run shows and writes. The library default is silent: no console, no trace file."""

    console: bool = False
    quiet: bool = False
    runs_dir: Path | str | None = None  # a directory for JSONL traces, e.g. "runs"
    sinks: Sequence[Any] = field(default_factory=list)  # extra trace sinks
    telemetry: Any = None  # OpenTelemetry: True, False, a TelemetrySettings; None follows instrument() / TOOLMODE_OTEL
