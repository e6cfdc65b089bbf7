"""The bench harness end to end: scripted players through the real Agent and the scripted model server.

These test the harness (runner, checkers, resume, report), not a model.
"""

from __future__ import annotations

import csv
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from toolmode.bench.cli import bench_main
from toolmode.bench.episode import BenchConfig
from toolmode.bench.modespec import parse_modes
from toolmode.bench.report import build_report
from toolmode.bench.results import read_results, write_settings
from toolmode.bench.runner import run_bench
from toolmode.bench.stats import SCRIPTED_NOTE
from toolmode.bench.suite import builtin_suite, select
from toolmode.bench.task import Task, TaskEnv

TASKS = ["log_stats", "time_and_title", "write_report", "api_multihop"]
MODES = "react,code,hybrid,react+load"


def _lines(bench: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (bench / "results.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def solved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A resumed bench: first 1 run of every episode, then the full 2 runs (only run 2 executes)."""
    bench = tmp_path_factory.mktemp("bench")
    tasks, specs = select(builtin_suite(), TASKS), parse_modes(MODES)
    first = run_bench(tasks, specs, 1, bench, BenchConfig(scripted=True), jobs=4, progress=False)
    assert len(first) == len(TASKS) * 4
    second = run_bench(tasks, specs, 2, bench, BenchConfig(scripted=True), jobs=4, progress=False)
    assert {r["run"] for r in second} == {2}
    assert len(second) == len(TASKS) * 4
    return bench


def test_every_episode_is_recorded_once_with_its_measures(solved: Path) -> None:
    records = _lines(solved)
    keys = [(r["task"], r["mode"], r["run"]) for r in records]
    assert len(keys) == len(set(keys)) == len(TASKS) * 4 * 2
    for r in records:
        assert r["scripted"] is True and r["player"] == "solve"
        assert r["steps"] >= 1 and r["prompt_tokens"] > 0 and r["completion_tokens"] > 0
        assert len(r["step_prompt_tokens"]) == r["steps"]
        assert r["cost"] is not None and r["cost"] > 0
        assert r["wall_time"] >= r["model_time"] > 0
        assert r["error"] is None
        assert (solved / r["trace"]).is_file()


def test_scripted_players_solve_every_task_in_every_mode(solved: Path) -> None:
    failures = [(r["task"], r["mode"], r["reason"], r.get("answer")) for r in _lines(solved) if not r["ok"]]
    assert failures == []


def test_modes_differ_in_requests_as_they_would_with_a_model(solved: Path) -> None:
    steps = {(r["task"], r["mode"]): r["steps"] for r in _lines(solved) if r["run"] == 1}
    assert steps[("log_stats", "code")] == 2  # one program, then the answer
    assert steps[("log_stats", "react")] == 7  # list, five reads, answer
    assert steps[("api_multihop", "react+load")] > steps[("api_multihop", "react")]  # searches first


def test_same_run_gets_the_same_fixtures_in_every_mode(solved: Path) -> None:
    seeds = {(r["task"], r["run"], r["seed"]) for r in _lines(solved)}
    assert len(seeds) == len(TASKS) * 2


def test_the_episode_workspace_holds_the_written_file(solved: Path) -> None:
    record = next(r for r in _lines(solved) if r["task"] == "write_report" and r["mode"] == "code")
    report = (solved / record["trace"]).parent / "workspace" / "report.csv"
    assert report.read_text().startswith("sku,total_qty\n")


def test_report_is_labelled_scripted_and_self_contained(solved: Path) -> None:
    report = build_report(solved)
    assert report.scripted
    rows = list(csv.DictReader(report.csv.open()))
    assert {(r["task"], r["mode"]) for r in rows} >= {(t, m) for t in TASKS for m in MODES.split(",")}
    assert all(r["scripted"] == "true" and r["note"] == SCRIPTED_NOTE for r in rows)
    assert all(r["n"] == "2" and r["success_rate"] == "1" for r in rows if r["task"] in TASKS)
    page = report.html.read_text()
    assert SCRIPTED_NOTE in page and "class='banner'" in page
    assert page.count('src="data:image/png;base64,') == 4
    assert "http://" not in page and "https://" not in page
    for chart in report.charts.values():
        assert chart.read_bytes().startswith(b"\x89PNG")


def test_failing_players_are_caught_by_the_checkers(tmp_path: Path) -> None:
    tasks, specs = select(builtin_suite(), TASKS), parse_modes("react,code,hybrid")
    records = run_bench(
        tasks, specs, 1, tmp_path, BenchConfig(scripted=True, failing=True), jobs=4, progress=False
    )
    assert len(records) == len(TASKS) * 3
    assert all(r["player"] == "fail" and not r["ok"] and r["error"] is None for r in records)
    assert all(r["reason"] and r["reason"] != "harness error" for r in records)


def test_a_broken_tool_makes_the_solving_player_fail(tmp_path: Path) -> None:
    (log_stats,) = select(builtin_suite(), ["log_stats"])

    def tools(env: TaskEnv) -> list[Any]:
        offered = log_stats.tools(env)
        read_file = next(t for t in offered if t.name == "read_file")
        real = read_file.fn
        read_file.fn = lambda **kw: real(**kw).split("\n", 1)[1]  # drops each file's first line
        return offered

    broken = Task(**{**log_stats.__dict__, "tools": tools})
    records = run_bench(
        [broken], parse_modes("react,code"), 1, tmp_path, BenchConfig(scripted=True), progress=False
    )
    assert [r["ok"] for r in records] == [False, False]
    assert all("expected" in r["reason"] for r in records)


def test_harness_errors_become_failed_records(tmp_path: Path) -> None:
    (task,) = select(builtin_suite(), ["log_stats"])

    def explode(workspace: Path, seed: int) -> dict[str, Any]:
        raise RuntimeError("fixture builder broke")

    broken = Task(**{**task.__dict__, "build": explode})
    (record,) = run_bench(
        [broken], parse_modes("react"), 1, tmp_path, BenchConfig(scripted=True), progress=False
    )
    assert record["ok"] is False and "fixture builder broke" in record["error"]
    assert read_results(tmp_path) == [record]


def test_cli_runs_resumes_and_rebuilds_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "b"
    args = ["--scripted", "--tasks", "tool_catalog", "--modes", "code+search,react+proxy", "--no-progress"]
    assert bench_main([*args, "--runs", "1", "--out", str(out), "--no-charts"]) == 0
    assert len(_lines(out)) == 2
    assert bench_main(["--resume", str(out), "--runs", "2", "--no-charts"]) == 0
    records = _lines(out)
    assert sorted((r["mode"], r["run"]) for r in records) == [
        ("code+search", 1), ("code+search", 2), ("react+proxy", 1), ("react+proxy", 2)
    ]  # fmt: skip
    assert all(r["ok"] for r in records)
    assert bench_main(["--report", str(out), "--no-charts"]) == 0
    printed = capsys.readouterr().out
    assert "SCRIPTED" in printed and "tool_catalog" in printed


def test_cli_refuses_unknown_tasks_and_modes(tmp_path: Path) -> None:
    assert bench_main(["--scripted", "--tasks", "nope", "--out", str(tmp_path / "x")]) == 2
    assert bench_main(["--scripted", "--modes", "code+proxy", "--out", str(tmp_path / "y")]) == 2


def test_demo_runs_offline_and_says_it_is_scripted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from toolmode.bench.demo import demo_main

    assert demo_main(["--quiet", "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert "scripted" in printed.lower() and "DEEPSEEK_API_KEY" in printed
    records = _lines(tmp_path)
    assert {(r["task"], r["mode"]) for r in records} == {
        (t, m) for t in ("log_stats", "time_and_title") for m in ("react", "code", "hybrid")
    }
    assert all(r["ok"] for r in records)
    guessed = next(r for r in records if r["task"] == "time_and_title" and r["mode"] == "code")
    trace = (tmp_path / guessed["trace"]).read_text()
    assert guessed["steps"] == 3 and "AttributeError" in trace  # the wrong guess, then the fix


def test_cli_stops_before_any_episode_without_an_api_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    assert bench_main(["--tasks", "log_stats", "--out", str(tmp_path / "b"), "--no-progress"]) == 2
    assert "DEEPSEEK_API_KEY" in capsys.readouterr().err
    assert not (tmp_path / "b" / "results.jsonl").exists()


def test_retry_errors_reruns_every_errored_episode(tmp_path: Path) -> None:
    tasks, specs = select(builtin_suite(), ["log_stats"]), parse_modes("react,code,hybrid,code+search")
    base = {"task": "log_stats", "run": 1, "seed": 1, "scripted": True}
    saved = [
        {**base, "mode": "react", "ok": True, "error": None, "stopped": "answer", "steps": 7},
        {**base, "mode": "code", "ok": False, "error": "ModelError: 500", "stopped": "error", "steps": 3},
        {**base, "mode": "hybrid", "ok": False, "error": None, "stopped": "error", "steps": 2},
        {
            **base,
            "mode": "code+search",
            "ok": False,
            "error": "RuntimeError: fixture",
            "reason": "harness error",
        },
    ]
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in saved))
    config = BenchConfig(scripted=True)
    assert run_bench(tasks, specs, 1, tmp_path, config, progress=False) == []  # a plain resume skips them
    rerun = run_bench(tasks, specs, 1, tmp_path, config, retry_errors=True, progress=False)
    assert sorted(r["mode"] for r in rerun) == ["code", "code+search", "hybrid"]
    assert all(r["ok"] for r in read_results(tmp_path))


@pytest.mark.parametrize(
    ("broken", "said"),
    [
        ({"ok": False, "reason": "harness error", "error": "RuntimeError: sandbox unavailable"}, "harness error"),
        ({"ok": False, "reason": "stopped: error", "error": "ModelError: 500", "stopped": "error", "steps": 1},
         "error (error)"),
        ({"ok": False, "reason": "title 'X' not in answer", "error": None, "stopped": "answer", "steps": 2},
         "wrong answer"),
    ],
)  # fmt: skip
def test_demo_fails_loudly_when_an_episode_goes_wrong(
    broken: dict[str, Any], said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    from toolmode.bench import demo

    def fake_episode(
        task: Task, spec: Any, run: int, seed: int, bench_dir: Path, config: Any
    ) -> dict[str, Any]:
        record = {"task": task.name, "kind": task.kind, "mode": spec.label, "run": run, "seed": seed,
                  "scripted": True, "ok": True, "error": None, "stopped": "answer", "steps": 2}  # fmt: skip
        if (task.name, spec.label) == ("time_and_title", "code"):
            record.update(broken)
        return record

    monkeypatch.setattr(demo, "run_episode", fake_episode)
    assert demo.demo_main(["--quiet", "--out", str(tmp_path)]) == 1
    printed = capsys.readouterr().out
    assert "demo FAILED: 1 of 6 episodes" in printed
    assert f"time_and_title · code: {said}" in printed


def _fake_records(bench: Path) -> None:
    rows = [
        {"task": t, "mode": m, "run": k, "ok": k != 2, "scripted": True, "steps": 2 + k, "prompt_tokens": 900 * k,
         "completion_tokens": 50, "cached_tokens": 0, "cost": 0.001, "wall_time": 0.3, "step_prompt_tokens": [400, 500]}
        for t in ("log_stats", "time_and_title") for m in ("react", "code") for k in (1, 2, 3)
    ]  # fmt: skip
    (bench / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_report_without_matplotlib_still_writes_table_csv_and_html(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from rich.console import Console

    _fake_records(tmp_path)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` now fails
    report = build_report(tmp_path, console=Console(width=200), charts=True)
    printed = capsys.readouterr().out
    assert "charts skipped: matplotlib is not installed" in printed
    assert "log_stats" in printed  # the table
    assert report.charts == {} and not list(tmp_path.glob("*.png"))
    assert len(list(csv.DictReader(report.csv.open()))) == 6
    page = report.html.read_text()
    assert "data:image/png" not in page and "charts skipped: matplotlib is not installed" in page
    assert "time_and_title" in page


SEARCH_MODES = "react+load,react+proxy,code+search,hybrid+search"


def _trace(bench: Path, record: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (bench / record["trace"]).read_text().splitlines()]


def test_time_and_title_search_modes_find_the_hidden_tools(tmp_path: Path) -> None:
    tasks = select(builtin_suite(), ["time_and_title"])
    records = run_bench(
        tasks, parse_modes(SEARCH_MODES), 1, tmp_path, BenchConfig(scripted=True), progress=False
    )
    assert len(records) == 4
    for r in records:
        assert r["ok"], (r["mode"], r["reason"], r.get("answer"))
        events = _trace(tmp_path, r)
        offered = set(next(e for e in events if e["kind"] == "tools")["names"])
        calls = [c for e in events if e["kind"] == "reply" for c in e["tool_calls"]]
        searched = [c for c in calls if c["name"] == "search_tools" or "search_tools(" in c["arguments"]]
        assert searched, f"{r['mode']}: no tool search in {calls}"
        assert "fetch_url" not in offered and "calculator" not in offered
        assert ("current_time" in offered) == (r["mode"] == "hybrid+search")  # hybrid keeps its direct tool


def _site_variant(*, link_targets_in_text: bool, links_in_result: bool) -> Task:
    (task,) = select(builtin_suite(), ["site_browse"])
    pages = task.pages
    assert pages is not None

    def variant_pages(seed: int) -> dict[str, str]:
        out = pages(seed)
        if not link_targets_in_text:  # "Aurora sensor (/products/aurora.html)" -> "Aurora sensor"
            out = {k: re.sub(r" \(/[\w./-]+\.html\)", "", v) for k, v in out.items()}
        return out

    def tools(env: TaskEnv) -> list[Any]:
        offered = task.tools(env)
        if not links_in_result:  # a fetch_url that returns no `links`
            fetch = next(t for t in offered if t.name == "fetch_url")
            real = fetch.fn

            def no_links(**kw: Any) -> Any:
                result = real(**kw)
                if isinstance(result, dict):
                    result.pop("links", None)
                return result

            fetch.fn = no_links
        return offered

    return Task(**{**task.__dict__, "pages": variant_pages, "tools": tools})


@pytest.mark.parametrize(
    ("link_targets_in_text", "links_in_result"), [(False, True), (True, False)], ids=["links", "link-text"]
)
def test_site_browse_players_follow_links_or_link_text(
    link_targets_in_text: bool, links_in_result: bool, tmp_path: Path
) -> None:
    task = _site_variant(link_targets_in_text=link_targets_in_text, links_in_result=links_in_result)
    records = run_bench(
        [task], parse_modes("react,code,hybrid,react+proxy"), 1, tmp_path, BenchConfig(scripted=True), jobs=4,
        progress=False,
    )  # fmt: skip
    assert [(r["mode"], r["reason"]) for r in records if not r["ok"]] == []


def test_report_wording_labels_and_narrow_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _fake_records(tmp_path)
    write_settings(
        tmp_path, {"modes": "react,code", "tasks": None, "runs": 3, "model": None, "base_url": None}
    )
    monkeypatch.setenv("COLUMNS", "80")  # a narrow terminal: the compact table
    assert bench_main(["--report", str(tmp_path), "--no-charts"]) == 0
    printed = capsys.readouterr().out
    assert "replies: scripted replies" not in printed
    assert "SCRIPTED: these figures test the harness, not a model." in printed
    lines = printed.splitlines()
    for name in ("log_stats", "time_and_title", "pooled over tasks"):
        assert any(name in line for line in lines), f"{name!r} is cut in:\n{printed}"
    assert "(all tasks)" not in printed and "run-to-run spread" in printed
    page = (tmp_path / "report.html").read_text()
    assert "None" not in page.split("<table")[0]  # the settings line skips unset values
    assert "<b>modes</b>: react,code" in page and "pooled over tasks" in page
    assert "pooled over tasks" in {r["task"] for r in csv.DictReader((tmp_path / "summary.csv").open())}
