"""A bench whose episodes all fail the same way because of the endpoint stops early and says why.

The endpoint is the project's scripted OpenAI-compatible server (its faults return 401/404/500) or a
loopback port nothing listens on; the error texts classified are the client's own.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from toolmode.bench.cli import bench_main
from toolmode.bench.earlystop import STOP_AFTER, EarlyStop, endpoint_failure
from toolmode.bench.results import finished_keys, read_results
from toolmode.models.client import ModelClient, ModelError
from toolmode.testing import ScriptedModelServer, fault, reply

BENCH = ["--tasks", "log_stats,csv_sales", "--modes", "react,code", "--runs", "2", "--no-progress", "--no-charts"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _client_error(base_url: str, *, deadline: float = 300.0) -> str:
    """The one-line error the real client gives for this endpoint."""
    client = ModelClient("m", base_url=base_url, api_key="k", deadline=deadline)
    try:
        with pytest.raises(ModelError) as caught:
            client.chat([{"role": "user", "content": "hi"}])
    finally:
        client.close()
    return str(caught.value)


def _errored(error: str, task: str = "t", mode: str = "code") -> dict[str, Any]:
    return {"task": task, "mode": mode, "run": 1, "ok": False, "stopped": "error", "error": error}


@pytest.mark.parametrize(
    ("item", "deadline", "said"),
    [
        (fault("status", status=401, message="Authentication Fails"), 300.0, "HTTP 401"),
        (fault("status", status=403, message="forbidden"), 300.0, "HTTP 403"),
        (fault("status", status=402, message="Insufficient Balance"), 300.0, "HTTP 402"),
        (fault("status", status=404, message="The model `m` does not exist."), 300.0, "not known"),
        (fault("status", status=400, message="Model Not Exist"), 300.0, "not known"),
        (fault("500"), 1.0, "HTTP 500 on every retry"),
    ],
)
def test_the_clients_endpoint_errors_are_classified(
    scripted: Callable[..., ScriptedModelServer], item: dict[str, Any], deadline: float, said: str
) -> None:
    server = scripted(lambda request, index: item)
    failure = endpoint_failure(_errored(_client_error(server.base_url, deadline=deadline)))
    assert failure is not None and said in failure


def test_an_unreachable_port_is_classified() -> None:
    failure = endpoint_failure(_errored(_client_error(f"http://127.0.0.1:{_free_port()}/v1")))
    assert failure is not None and "unreachable" in failure


def test_task_level_failures_are_not_endpoint_failures(scripted: Callable[..., ScriptedModelServer]) -> None:
    server = scripted(lambda request, index: fault("status", status=400, message="context length exceeded"))
    assert endpoint_failure(_errored(_client_error(server.base_url))) is None
    assert endpoint_failure({"ok": False, "stopped": "answer", "error": None, "reason": "expected 12"}) is None
    assert endpoint_failure({"ok": False, "reason": "harness error", "error": "RuntimeError: fixture"}) is None
    assert endpoint_failure({"ok": False, "stopped": "step_limit", "error": "stopped: step limit (12)"}) is None


def test_only_a_run_of_the_same_failure_stops() -> None:
    e401 = _errored("model API error 401 from http://x/v1 (model m): bad key (check the API key)")
    e404 = _errored("model API error 404 from http://x/v1 (model m): model not found")
    wrong = {"task": "t", "mode": "code", "run": 1, "ok": False, "stopped": "answer", "error": None}
    watch = EarlyStop(3)
    for record in (e401, e401, wrong, e401, e401, e404, e401, e401):
        assert watch.observe(record) is None
    assert watch.observe(e401) is not None and "HTTP 401" in (watch.reason or "")
    assert EarlyStop(0).observe(e401) is None  # 0 turns it off


def _stopped(capsys: pytest.CaptureFixture[str], out: Path) -> str:
    printed = capsys.readouterr().err
    assert printed.startswith("toolmode bench: stopped early: ") and printed.count("\n") == 1, printed
    assert f"--resume {out}" in printed
    return printed


def test_a_refused_key_stops_after_three_episodes(
    scripted: Callable[..., ScriptedModelServer], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = scripted(lambda request, index: fault("status", status=401, message="Authentication Fails"))
    out = tmp_path / "b"
    status = bench_main([*BENCH, "--base-url", server.base_url, "--model", "m", "--jobs", "1", "--out", str(out)])
    assert status == 1
    printed = _stopped(capsys, out)
    assert f"{STOP_AFTER} episodes in a row" in printed and "HTTP 401" in printed and "Authentication Fails" in printed
    assert len(server.requests) == STOP_AFTER  # 8 episodes planned, 3 run
    assert len(read_results(out)) == STOP_AFTER


def test_an_unreachable_endpoint_stops_early(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "b"
    url = f"http://127.0.0.1:{_free_port()}/v1"
    assert bench_main([*BENCH, "--base-url", url, "--model", "m", "--jobs", "2", "--out", str(out)]) == 1
    assert "unreachable" in _stopped(capsys, out)
    records = read_results(out)
    assert STOP_AFTER <= len(records) < 8  # at most the running one besides the three, never all 8
    assert finished_keys(records) == set()  # they measured nothing: a resume runs them again


def test_resume_after_the_fix_reruns_the_failed_episodes(
    scripted: Callable[..., ScriptedModelServer], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fixed = threading.Event()

    def script(request: dict[str, Any], index: int) -> Any:
        return reply("I do not know.") if fixed.is_set() else fault("status", status=401)

    server = scripted(script)
    out = tmp_path / "b"
    assert bench_main([*BENCH, "--base-url", server.base_url, "--model", "m", "--jobs", "1", "--out", str(out)]) == 1
    fixed.set()
    assert bench_main(["--resume", str(out), "--no-progress", "--no-charts"]) == 0
    records = read_results(out)
    assert len(records) == 8
    assert all(r["error"] is None and r["stopped"] == "answer" and not r["ok"] for r in records)  # wrong answers


def test_wrong_answers_never_stop_a_bench(tmp_path: Path) -> None:
    out = tmp_path / "b"
    args = ["--scripted", "--failing", *BENCH, "--out", str(out)]
    assert bench_main(args) == 0
    records = read_results(out)
    assert len(records) == 8 and not any(r["ok"] for r in records)


def test_the_endpoints_error_text_reaches_the_terminal_escaped(
    scripted: Callable[..., ScriptedModelServer], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The endpoint writes the error text: a clipboard write (OSC 52), a screen clear and a bidi override.
    hostile = "Authentication Fails\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\u202etxt.exe"
    server = scripted(lambda request, index: fault("status", status=401, message=hostile))
    out = tmp_path / "b"
    assert bench_main([*BENCH, "--base-url", server.base_url, "--model", "m", "--jobs", "1", "--out", str(out)]) == 1
    printed = _stopped(capsys, out)
    assert "Authentication Fails" in printed
    assert "\x1b" not in printed and "\x07" not in printed and "\u202e" not in printed
