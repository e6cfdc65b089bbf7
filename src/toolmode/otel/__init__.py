"""OpenTelemetry for toolmode runs (the `toolmode[otel]` extra): spans and metrics in the GenAI semantic
conventions v1.41.0, exported through whatever TracerProvider and MeterProvider the application set up.

```python
import toolmode.otel
toolmode.otel.instrument()                    # every Agent's runs, from now on
agent = Agent(tools, output=OutputSettings(telemetry=True))   # or one agent (flat: telemetry=True)
agent = Agent(tools, output=OutputSettings(telemetry=TelemetrySettings(capture_content=True, agent_name="support")))
```

Prompts, answers, tool arguments and results are not recorded unless `capture_content=True` or
OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true.
"""

from __future__ import annotations

from typing import Any

from toolmode.otel.sink import OtelSink
from toolmode.telemetry import TelemetrySettings, set_default

__all__ = ["OtelSink", "TelemetrySettings", "instrument", "uninstrument"]


def instrument(settings: TelemetrySettings | None = None, **options: Any) -> TelemetrySettings:
    """Export the runs of every Agent that did not choose (`telemetry=None`), from now on.

    Give a TelemetrySettings or its fields as keywords (`capture_content=True`, `tracer_provider=...`);
    returns the settings in force. `uninstrument()` turns it off again.
    """
    if settings is not None and options:
        raise ValueError("give either a TelemetrySettings or its fields as keywords, not both")
    chosen = settings or TelemetrySettings(**options)
    set_default(chosen)
    return chosen


def uninstrument() -> None:
    """Stop exporting runs of agents that did not choose (their own `telemetry=True` still holds)."""
    set_default(None)
