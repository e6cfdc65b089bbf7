"""The two GenAI client metrics of the conventions: `gen_ai.client.token.usage` and
`gen_ai.client.operation.duration`, histograms with the bucket boundaries the conventions advise."""

from __future__ import annotations

from typing import Any

TOKEN_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864)
DURATION_BUCKETS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92)


class Instruments:
    """The histograms, made once per meter."""

    def __init__(self, meter: Any) -> None:
        self.tokens = meter.create_histogram(
            "gen_ai.client.token.usage", unit="{token}", description="Number of input and output tokens used.",
            explicit_bucket_boundaries_advisory=TOKEN_BUCKETS)
        self.duration = meter.create_histogram(
            "gen_ai.client.operation.duration", unit="s", description="GenAI operation duration.",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS)

    def request(self, attributes: dict[str, Any], seconds: float, counts: dict[str, Any] | None) -> None:
        """Record one model request: its duration and (when it succeeded) its input and output tokens.

        Input tokens include the cached ones, as on the spans."""
        self.duration.record(seconds, attributes)
        if counts is not None:
            self.tokens.record(int(counts.get("prompt_tokens") or 0), {**attributes, "gen_ai.token.type": "input"})
            self.tokens.record(int(counts.get("completion_tokens") or 0), {**attributes, "gen_ai.token.type": "output"})

    def operation(self, attributes: dict[str, Any], seconds: float) -> None:
        """Record the duration of another operation (a whole run: `invoke_agent`)."""
        self.duration.record(seconds, attributes)
