"""What OpenTelemetry export costs per step: the loop_overhead harness with telemetry off and on.

    python benchmarks/otel_overhead.py [--runs 15] [--steps 20] [--tools 50] [--variants off,on,content]

Variants, alternating within each round so a slow patch of the machine hits them alike:
- `off`: no telemetry (the default); the script checks that nothing of OpenTelemetry was imported by it;
- `on`: `telemetry=True` with the SDK set up as an application would (BatchSpanProcessor + OTLP/HTTP span
  exporter, PeriodicExportingMetricReader + OTLP/HTTP metric exporter) sending to a receiver in another
  process, so encoding and sending are counted and receiving is not;
- `content`: as `on`, with content capture (every request's conversation serialised onto its span).
The figure is the agent process's CPU time per step (all threads, the exporters' included), as in
loop_overhead.py; the providers are flushed inside the measured window, so no export escapes it. For the
variants with telemetry, the CPU is also split into the sink's share (turning events into spans and metric
records, in the run's own threads) and the exporters' (encoding and sending, in the SDK's threads).
"""

from __future__ import annotations

import argparse
import functools
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from loop_overhead import make_tools, start_server  # noqa: E402

from toolmode import Agent, TelemetrySettings, Tool  # noqa: E402
from toolmode.testing import call, reply  # noqa: E402

SHARES = {"sink": 0.0, "export": 0.0}  # thread CPU seconds inside OtelSink.emit / the exporters' export()


def _counted(fn, share: str):  # type: ignore[no-untyped-def]
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
        start = time.thread_time()
        try:
            return fn(*args, **kwargs)
        finally:
            SHARES[share] += time.thread_time() - start

    return wrapper


def _count_shares() -> None:
    """Wrap the sink's and the exporters' entry points with thread-CPU counters (once, when first needed)."""
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    from toolmode.otel.sink import OtelSink

    if not hasattr(OtelSink.emit, "__wrapped__"):
        OtelSink.emit = _counted(OtelSink.emit, "sink")  # type: ignore[method-assign]
        OTLPSpanExporter.export = _counted(OTLPSpanExporter.export, "export")  # type: ignore[method-assign]
        OTLPMetricExporter.export = _counted(OTLPMetricExporter.export, "export")  # type: ignore[method-assign]


RECEIVER = """
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class H(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()
    def log_message(self, *a): pass
s = ThreadingHTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
"""


class Exporting:
    """SDK providers exporting over OTLP/HTTP to `endpoint`, made fresh per run and flushed by `finish()`."""

    def __init__(self, endpoint: str) -> None:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        _count_shares()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(f"{endpoint}/v1/traces")))
        self.meter_provider = MeterProvider(metric_readers=[
            PeriodicExportingMetricReader(OTLPMetricExporter(f"{endpoint}/v1/metrics"))])

    def flush(self) -> None:
        """Send what is pending now (the warm-up run's spans and metrics, before the measured run)."""
        self.tracer_provider.force_flush()
        self.meter_provider.force_flush()

    def finish(self) -> None:
        self.tracer_provider.shutdown()
        self.meter_provider.shutdown()


def one_run(steps: int, tools: list[Tool], workdir: Path, variant: str, endpoint: str) -> tuple[float, int]:
    """(agent-process CPU seconds, steps) of one measured run of `variant`."""
    script = [call(f"lookup_{s % len(tools):02d}", city=f"city {s}", days=s % 7 + 1) for s in range(steps - 1)]
    script.append(reply("done"))
    exporting = Exporting(endpoint) if variant != "off" else None
    telemetry = (TelemetrySettings(tracer_provider=exporting.tracer_provider, meter_provider=exporting.meter_provider,
                                   capture_content=variant == "content") if exporting else False)
    for measured in (False, True):  # the first run opens the connection (and imports what telemetry needs)
        proc, url = start_server(script, workdir)
        try:
            with Agent(tools=tools, mode="react", base_url=url, model="bench", console=False,
                       runs_dir=workdir / "runs", max_steps=steps, telemetry=telemetry) as agent:
                cpu0 = time.process_time()
                SHARES.update(sink=0.0, export=0.0)
                result = agent.run("Look up every city." if measured else "warm up")
                if measured and exporting is not None:
                    exporting.finish()  # what the run exported is sent inside the window
                cpu = time.process_time() - cpu0
                if not measured and exporting is not None:
                    exporting.flush()
        finally:
            proc.terminate()
            proc.wait()
    assert result.stopped == "answer" and result.steps == steps, result.error
    return cpu, result.steps


def main() -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--tools", type=int, default=50)
    parser.add_argument("--variants", default="off,on,content")
    args = parser.parse_args()
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    tools = make_tools(args.tools)
    receiver = subprocess.Popen([sys.executable, "-c", RECEIVER], stdout=subprocess.PIPE, text=True)
    assert receiver.stdout is not None
    endpoint = f"http://127.0.0.1:{receiver.stdout.readline().strip()}"
    cpu_ms: dict[str, list[float]] = {v: [] for v in variants}
    shares_ms: dict[str, list[tuple[float, float]]] = {v: [] for v in variants}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            if "off" in variants:
                one_run(2, tools, Path(tmp), "off", endpoint)
                imported = sorted(m for m in sys.modules if m.split(".")[0] == "opentelemetry")
                print(f"off: modules of opentelemetry imported by a run without telemetry: {len(imported)}")
            for _ in range(args.runs):
                for v in variants:
                    cpu, steps = one_run(args.steps, tools, Path(tmp), v, endpoint)
                    cpu_ms[v].append(cpu / steps * 1000)
                    shares_ms[v].append((SHARES["sink"] / steps * 1000, SHARES["export"] / steps * 1000))
                    print(f"{v:>8}: agent CPU {cpu_ms[v][-1]:.2f} ms/step")
    finally:
        receiver.terminate()
        receiver.wait()
    print(f"\nagent CPU per step ({args.steps} steps, {args.tools} tools, {args.runs} runs per variant, interleaved):")
    base = statistics.median(cpu_ms[variants[0]])
    for v in variants:
        med = statistics.median(cpu_ms[v])
        rel = f" ({(med / base - 1) * 100:+.1f}% vs {variants[0]}, {med - base:+.3f} ms)" if v != variants[0] else ""
        split = ""
        if v != "off":
            split = (f"; sink {statistics.median(s for s, _ in shares_ms[v]):.3f} ms, exporters "
                     f"{statistics.median(e for _, e in shares_ms[v]):.3f} ms")
        print(f"  {v:>8}: median {med:.3f} ms{rel} (min {min(cpu_ms[v]):.3f}, max {max(cpu_ms[v]):.3f}){split}")


if __name__ == "__main__":
    main()
