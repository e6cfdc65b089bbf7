"""M3ToolEval (the CodeAct paper's suite) loaded from its own folder, run through the bench with scripted players.

The suite is third-party data beside the repository (`<repo>/../shared/data/m3tooleval`); these tests skip
when it is absent. They test toolmode's loading, tool conversion and checking, not a model.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from toolmode.agent import Agent
from toolmode.bench.cli import bench_main
from toolmode.bench.results import read_results
from toolmode.bench.suites.m3tooleval import SuiteError, find_package, load_suite_tasks, m3tooleval_suite
from toolmode.bench.task import TaskEnv
from toolmode.testing import call, reply

REPO = Path(__file__).resolve().parents[1]
CANDIDATES = [REPO.parent / "shared" / "data" / "m3tooleval", Path("/work/shared/data/m3tooleval")]
SUITE = next((p for p in CANDIDATES if (p / "tasks" / "__init__.py").is_file()), None)
CATEGORIES = {
    "web_browsing",
    "travel_itinerary_planning",
    "cryptobotanists_plant_dna_sequencer",
    "message_decoder",
    "trade_calculator",
}

pytestmark = pytest.mark.skipif(
    SUITE is None, reason=f"M3ToolEval task modules not found (looked in {', '.join(map(str, CANDIDATES))})"
)


def _env(mode: str | None = "react", tmp: Path = Path(".")) -> TaskEnv:
    return TaskEnv(workspace=tmp, seed=0, facts={}, mode=mode)


def test_every_registered_task_loads_as_a_bench_task() -> None:
    suite_tasks = load_suite_tasks(SUITE)
    base = next(m for name, m in sys.modules.items() if name.endswith(".base") and "m3tooleval" in name)
    registered = sum(length for _, length in base.task_iterators)
    tasks = m3tooleval_suite(SUITE)
    assert len(tasks) == len(suite_tasks) == registered > 0
    assert [t.name for t in tasks] == [t.name for t in suite_tasks]
    assert len({t.name for t in tasks}) == len(tasks)
    assert {t.kind for t in tasks} == CATEGORIES
    for task, original in zip(tasks, suite_tasks, strict=True):
        tools = task.tools(_env())
        assert [t.name for t in tools] == list(original.tools)
        assert original.instruction.strip() in task.render_prompt(_env())
        for t in tools:
            assert t.description == original.tools[t.name].description.strip()


def test_the_suite_path_may_name_the_tasks_folder_itself() -> None:
    assert find_package(SUITE) == find_package(SUITE / "tasks")


def test_a_folder_without_task_modules_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SuiteError, match=r"no M3ToolEval task modules in .*expected tasks/__init__.py"):
        find_package(tmp_path)


def _sample(schema: dict[str, Any]) -> Any:
    return {"string": "A", "integer": 3, "number": 2.5}.get(schema.get("type"), 3)


def _calls(tools: list[Any]) -> list[tuple[str, list[Any]]]:
    """One call per tool, positional, with arguments of the declared types (varargs: three of them)."""
    out = []
    for t in tools:
        args = []
        for name, schema in t.parameters["properties"].items():
            if name == t.varargs:
                item = schema.get("items") or {}
                args += [_sample(item), 1, 2] if item.get("type") != "string" else ["A", "B"]
            else:
                args.append(_sample(schema))
        out.append((t.name, args))
    return out


def _program(calls: list[tuple[str, list[Any]]]) -> str:
    lines = ["import json", "out = []"]
    for name, args in calls:
        lines += [
            "try:",
            f"    out.append({{'ok': {name}(*{args!r})}})",
            "except Exception as exc:",
            "    out.append({'raised': True})",
        ]
    return "\n".join([*lines, "print('RESULT ' + json.dumps(out))"])


def _host(tools: list[Any], calls: list[tuple[str, list[Any]]]) -> list[dict[str, Any]]:
    by_name = {t.name: t for t in tools}
    out = []
    for name, args in calls:
        t = by_name[name]
        plain = [p for p in t.parameters["properties"] if p != t.varargs]
        kwargs = dict(zip(plain, args, strict=False))
        if t.varargs:
            kwargs[t.varargs] = args[len(plain) :]
        try:
            out.append({"ok": json.loads(json.dumps(t(**kwargs), default=str))})
        except Exception:  # noqa: BLE001 - the same failure must show in the program
            out.append({"raised": True})
    return out


@pytest.mark.parametrize("category", sorted(CATEGORIES))
def test_tools_are_callable_from_code_mode(category: str, scripted: Any, tmp_path: Path) -> None:
    """A run_code program calls every tool of the category's first task; results match direct host calls."""
    tasks = [t for t in m3tooleval_suite(SUITE) if t.kind == category]
    task = tasks[0]
    tools = task.tools(_env("code", tmp_path))
    # The other tasks of the category offer the same functions under the same names and signatures.
    for other in tasks[1:]:
        assert [(t.name, t.signature()) for t in other.tools(_env("code", tmp_path))] == [
            (t.name, t.signature()) for t in tools
        ]
    calls = _calls(tools)
    server = scripted([call("run_code", code=_program(calls)), reply("done")])
    with Agent(
        tools, mode="code", model="m", base_url=server.base_url, api_key="k", workspace=tmp_path
    ) as agent:
        result = agent.run(task.render_prompt(_env("code", tmp_path)))
    assert result.answer == "done"
    printed = next(r for r in result.records for c in r.calls if "RESULT " in (c.result or ""))
    text = next(c.result for c in printed.calls if "RESULT " in (c.result or ""))
    got = json.loads(text.split("RESULT ", 1)[1].strip().splitlines()[0])
    expected = _host(task.tools(_env("code", tmp_path)), calls)
    assert got == expected
    assert any("ok" in g for g in got)  # at least some calls returned a value from the host


def test_travel_min_and_max_are_python_builtins_in_code_and_tools_in_react(tmp_path: Path) -> None:
    task = next(t for t in m3tooleval_suite(SUITE) if t.kind == "travel_itinerary_planning")
    react = {t.name for t in task.tools(_env("react", tmp_path))}
    code = {t.name for t in task.tools(_env("code", tmp_path))}
    assert {"min", "max", "sum"} <= react
    assert "min" not in code and "max" not in code and "sum" in code  # the suite's sum is its own lambda


def test_the_suites_eval_calculator_never_evals_model_text(tmp_path: Path) -> None:
    task = next(t for t in m3tooleval_suite(SUITE) if t.kind == "trade_calculator")
    calc = next(t for t in task.tools(_env("react", tmp_path)) if t.name == "calculator")
    assert calc(expression="2 + (3 * 4)") == 14
    marker = tmp_path / "pwned"
    hostile = f"__import__('pathlib').Path({str(marker)!r}).write_text('x')"
    with pytest.raises(ValueError, match="Failed to evaluate expression: __import__"):  # a failed call now
        calc(expression=hostile)
    assert not marker.exists()


def test_the_suites_calculator_calls_the_tasks_numeric_tools_as_its_eval_could(tmp_path: Path) -> None:
    # The suite's `eval` sees its module's functions: `calculator("find_maximum(...)")` worked there, and the
    # safe evaluator answered "Failed to evaluate expression" as a result (not a failure), which the 1.5B
    # then answered around (react most_profitable_conversion_rate).
    task = next(t for t in m3tooleval_suite(SUITE) if t.name == "trade_calculator/most_profitable_conversion_rate")
    calc = next(t for t in task.tools(_env("react", tmp_path)) if t.name == "calculator")
    assert calc(expression="find_maximum(3, 9, 4) * 2") == 18
    assert calc(expression="convert_currency(100, 1.5) + calculate_tariff(200, 10)") == 170.0
    from toolmode.tools.calculator import evaluate

    with pytest.raises(ValueError, match="returned str, not a number"):  # a helper's result must be a number
        evaluate("f(1) * 10**8", {"f": lambda x: "ab"})
    with pytest.raises(ValueError, match="function 'calculator' is not allowed"):
        calc(expression="calculator(1)")  # the eval-ing tool itself is not offered to expressions
    web = next(t for t in m3tooleval_suite(SUITE) if t.kind == "web_browsing")
    web_calc = next(t for t in web.tools(_env("react", tmp_path)) if t.name == "calculator")
    with pytest.raises(ValueError, match="function 'click_url' is not allowed"):
        web_calc(expression="click_url(1)")  # a tool that takes text (and changes the browser) is not numeric


def test_answers_are_checked_by_the_suites_own_rule(tmp_path: Path) -> None:
    tasks = {t.name: (t, o) for t, o in zip(m3tooleval_suite(SUITE), load_suite_tasks(SUITE), strict=True)}
    task, original = tasks["trade_calculator/estimate_final_value"]
    expected = original.expected_output
    assert task.check(f"Answer: {expected}", tmp_path, {}).ok
    assert task.check(f"{expected}", tmp_path, {}).ok  # no 'Answer:': the whole reply
    assert task.check(
        f"Answer: {float(expected):.3f}", tmp_path, {}
    ).ok  # the suite compares numbers as numbers
    assert not task.check(f"Answer: {expected + 1}", tmp_path, {}).ok
    assert not task.check(f"Action: calculator('1') Answer: {expected}", tmp_path, {}).ok  # both: invalid


def _bench(out: Path, *extra: str) -> int:
    return bench_main(["--suite", "m3tooleval", "--suite-path", str(SUITE), "--scripted", "--out", str(out),
                       "--no-progress", "--no-charts", "--jobs", "4", "--runs", "1", *extra])  # fmt: skip


def test_expected_output_player_scores_100_percent_and_wrong_player_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Real bench runs: scripted model server, agent loop in every mode, the suite's checker."""
    n = len(load_suite_tasks(SUITE))
    assert _bench(tmp_path / "solve", "--modes", "react,code,hybrid") == 0
    solved = read_results(tmp_path / "solve")
    assert len(solved) == 3 * n
    assert [(r["task"], r["mode"], r["reason"]) for r in solved if not r["ok"]] == []
    # The player answers without a tool: a task whose text touches its tools is asked once to use them
    # (act_first, "nudge" for a custom endpoint) and answered again; the rest (e.g. "Which person's phone
    # number is ...?" shares no word with the browser's tools) end at step 1.
    assert all(r["stopped"] == "answer" for r in solved)
    steps = Counter(r["steps"] for r in solved)
    assert set(steps) == {1, 2} and steps[2] > 10 * steps[1]
    shown = capsys.readouterr().out
    assert "74.4%" in shown and "52.4%" in shown and "5.5" in shown and "7.6" in shown
    assert "100.0%" in shown
    html = (tmp_path / "solve" / "report.html").read_text()
    assert "gpt-4-1106-preview" in html and "74.4%" in html

    assert _bench(tmp_path / "fail", "--modes", "react", "--failing") == 0
    failed = read_results(tmp_path / "fail")
    assert len(failed) == n
    assert [r["task"] for r in failed if r["ok"]] == []
    assert all(r["reason"].startswith("expected ") for r in failed)


def test_bad_suite_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = [
        (["--suite", "nope"], "unknown suite 'nope'"),
        (["--suite", "m3tooleval", "--suite-path", str(tmp_path)], "no M3ToolEval task modules in"),
        (["--suite", "m3tooleval"], "needs --suite-path"),
    ]
    for argv, message in cases:
        assert bench_main([*argv, "--scripted", "--out", str(tmp_path / "b")]) == 2
        err = capsys.readouterr().err.strip()
        assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "b").exists()
    assert os.listdir(tmp_path) == []
