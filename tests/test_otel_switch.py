"""Turning telemetry on and off: nothing of OpenTelemetry is imported unless it is on; `instrument()` and
TOOLMODE_OTEL turn it on through the application's global providers; a missing extra is one clear error.

Each case runs in a fresh interpreter: the global providers and `sys.modules` are per process."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from toolmode.testing import call, reply

PRELUDE = """
import sys
sys.path.insert(0, {tests!r})
from echo_agent import echo
from toolmode import Agent

def agent(url, **options):
    return Agent(tools=[echo], mode="react", model="m", base_url=url, **options)
"""


def run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    tests = os.path.dirname(os.path.abspath(__file__))
    source = PRELUDE.format(tests=tests) + textwrap.dedent(code)
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "TOOLMODE_OTEL"))}
    return subprocess.run([sys.executable, "-c", source], env={**environ, **env}, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


def test_a_run_without_telemetry_imports_nothing_of_opentelemetry(scripted) -> None:
    server = scripted([call("echo", text="x"), reply("done")])
    done = run_python(f"""
        a = agent({server.base_url!r})
        print(a.run("go").answer)
        a.chat()
        print(sorted(m for m in sys.modules if m.split(".")[0] == "opentelemetry" or m.startswith("toolmode.otel")))
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["done", "[]"]


def test_instrument_exports_every_agents_runs_to_the_global_provider_until_uninstrument(scripted) -> None:
    server = scripted([reply("one"), reply("two"), reply("three")])
    done = run_python(f"""
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        import toolmode.otel

        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        a = agent({server.base_url!r})  # made before instrument(): its runs follow the switch at run time
        toolmode.otel.instrument(agent_name="global")
        a.run("a")
        agent({server.base_url!r}, telemetry=False).run("b")
        toolmode.otel.uninstrument()
        a.run("c")
        print([s.name for s in exporter.get_finished_spans()])
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['chat m', 'invoke_agent global']"


def test_the_toolmode_otel_variable_turns_telemetry_on(scripted) -> None:
    server = scripted([reply("one")])
    done = run_python(f"""
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        agent({server.base_url!r}).run("a")
        print(sorted(s.name for s in exporter.get_finished_spans()))
    """, TOOLMODE_OTEL="1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['chat m', 'invoke_agent']"


@pytest.mark.parametrize("how", ["Agent(telemetry=True)", "TOOLMODE_OTEL=1", "toolmode run --otel"])
def test_without_the_extra_telemetry_is_one_clear_error(how: str) -> None:
    block = "sys.modules['opentelemetry'] = None  # as if toolmode[otel] were not installed\n"
    if how == "Agent(telemetry=True)":
        code = block + """
from toolmode import Agent
try:
    Agent(model="m", base_url="http://127.0.0.1:9/v1", telemetry=True)
except ImportError as exc:
    print(type(exc).__name__, exc)
"""
        done = run_python(code)
    elif how == "TOOLMODE_OTEL=1":
        code = block + """
try:
    agent("http://127.0.0.1:9/v1").run("go")
except ImportError as exc:
    print(type(exc).__name__, exc)
"""
        done = run_python(code, TOOLMODE_OTEL="1")
    else:
        code = block + """
from toolmode.cli import main
sys.exit(main(["run", "hi", "--otel", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--no-builtin"]))
"""
        done = run_python(code)
        assert done.returncode == 2
        assert done.stderr.strip() == "toolmode: telemetry needs OpenTelemetry: pip install 'toolmode[otel]'"
        return
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "MissingOtelExtra telemetry needs OpenTelemetry: pip install 'toolmode[otel]'"
