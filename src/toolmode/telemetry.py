"""Whether a run exports OpenTelemetry, and how: the settings, the process-wide switch, the environment.

Nothing here imports OpenTelemetry: an Agent reads this module to decide, and `toolmode.otel` (the
`toolmode[otel]` extra) is imported only when telemetry is on. Telemetry is on for a run when the Agent
was given `telemetry=True` or a `TelemetrySettings`, or (with `telemetry=None`, the default) when
`toolmode.otel.instrument()` was called or `TOOLMODE_OTEL` is set to a true value; `telemetry=False` keeps
it off whatever the process says.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

SWITCH_ENV = "TOOLMODE_OTEL"
CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"  # the name OpenTelemetry's GenAI packages read
_TRUE = {"1", "true", "yes", "on"}
_SPAN_CAPTURE = {"span_only", "span_and_event"}  # the newer values (with gen_ai_latest_experimental)
EXTRA_HINT = "pip install 'toolmode[otel]'"


@dataclass(frozen=True)
class TelemetrySettings:
    """How a run is exported.

    `capture_content`: record prompts, answers, tool arguments and results on the spans (off by default;
    None reads OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: `true` or `SPAN_ONLY` turn it on).
    `tracer_provider` / `meter_provider`: where spans and metrics go (None: the global providers the
    application configured). `agent_name`: `gen_ai.agent.name`, and the run span's name
    (`invoke_agent <name>`). `provider_name`: `gen_ai.provider.name` (None: from the endpoint, e.g.
    `deepseek`, `openai`, `ollama`; `custom` for an endpoint toolmode has no preset for).
    """

    capture_content: bool | None = None
    tracer_provider: Any = None
    meter_provider: Any = None
    agent_name: str | None = None
    provider_name: str | None = None

    def captures_content(self) -> bool:
        """Whether content goes on the spans: the setting, else the environment variable."""
        if self.capture_content is not None:
            return self.capture_content
        return env_flag(CAPTURE_ENV, extra=_SPAN_CAPTURE)


class MissingOtelExtra(ImportError):
    """Telemetry was turned on but OpenTelemetry is not installed."""


_default: TelemetrySettings | None = None  # set by toolmode.otel.instrument()


def set_default(settings: TelemetrySettings | None) -> None:
    """Turn telemetry on (or off, with None) for every run whose Agent did not choose."""
    global _default
    _default = settings


def env_flag(name: str, extra: Collection[str] = ()) -> bool:
    """Whether the environment variable `name` holds a true value (1, true, yes, on, or one of `extra`)."""
    value = os.environ.get(name, "").strip().lower()
    return value in _TRUE or value in extra


def check(value: Any) -> bool | TelemetrySettings | None:
    """`value` if it is a valid `telemetry=` argument (None, a bool, a TelemetrySettings), else ValueError."""
    if value is None or isinstance(value, bool | TelemetrySettings):
        return value  # type: ignore[no-any-return]
    raise ValueError(f"telemetry must be True, False, None or a toolmode.TelemetrySettings, not {type(value).__name__}")


def resolve(value: bool | TelemetrySettings | None) -> TelemetrySettings | None:
    """The settings a run uses for the Agent's `telemetry=` value, or None when telemetry is off."""
    if value is False:
        return None
    if isinstance(value, TelemetrySettings):
        return value
    if value is True:
        return _default or TelemetrySettings()
    if _default is not None:
        return _default
    return TelemetrySettings() if env_flag(SWITCH_ENV) else None


def require_extra() -> None:
    """Raise MissingOtelExtra, with the install command, when `opentelemetry-api` cannot be imported."""
    try:
        import opentelemetry.trace  # noqa: F401
    except ImportError:
        raise MissingOtelExtra(f"telemetry needs OpenTelemetry: {EXTRA_HINT}") from None
