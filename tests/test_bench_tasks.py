"""The task format and the built-in suite: deterministic fixtures, tools, mode specs, user task files."""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path

import pytest

from toolmode.bench.fixtures import FixtureServer
from toolmode.bench.modespec import parse_mode, parse_modes
from toolmode.bench.suite import builtin_suite, select
from toolmode.bench.task import Task, TaskEnv, load_tasks


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_suite_has_at_least_twelve_uniquely_named_tasks_of_several_kinds() -> None:
    tasks = builtin_suite()
    assert len(tasks) >= 12
    assert len({t.name for t in tasks}) == len(tasks)
    assert {"batch-files", "web", "chained-arithmetic", "multi-hop", "tool-choice", "judgement", "write"} <= {
        t.kind for t in tasks
    }


@pytest.mark.parametrize("task", builtin_suite(), ids=lambda t: t.name)
def test_fixtures_are_deterministic_per_seed(task: Task, tmp_path: Path) -> None:
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    for d in (a, b, c):
        d.mkdir()
    facts_a, facts_b, facts_c = task.build(a, 1), task.build(b, 1), task.build(c, 2)
    assert repr(facts_a) == repr(facts_b)
    assert _tree(a) == _tree(b)
    if task.pages:
        assert task.pages(1) == task.pages(1)
    assert repr(facts_a) != repr(facts_c) or _tree(a) != _tree(c)


@pytest.mark.parametrize("task", builtin_suite(), ids=lambda t: t.name)
def test_tools_prompt_and_hidden_names_fit_together(task: Task, tmp_path: Path) -> None:
    facts = task.build(tmp_path, 3)
    env = TaskEnv(tmp_path, 3, facts, base_url="http://127.0.0.1:9")
    names = [t.name for t in task.tools(env)]
    assert len(set(names)) == len(names)
    assert set(task.hidden) <= set(names)
    assert set(task.direct or []) <= set(names)
    prompt = task.render_prompt(env)
    assert "{" not in prompt.replace("{}", ""), prompt
    if task.pages:
        assert "http://127.0.0.1:9/" in prompt


def test_catalog_offers_fifty_catalog_tools_besides_the_builtins(tmp_path: Path) -> None:
    task = select(builtin_suite(), ["tool_catalog"])[0]
    facts = task.build(tmp_path, 1)
    tools = task.tools(TaskEnv(tmp_path, 1, facts))
    catalog = [t for t in tools if t.source != "builtin"]
    assert len(catalog) == 50
    assert {"postcode_zone", "shipping_rate"} <= {t.name for t in catalog}


def test_fixture_server_serves_pages_on_loopback() -> None:
    with FixtureServer({"index.html": "<title>Hi</title>", "data.json": "{}"}) as server:
        assert server.base_url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(server.base_url + "/index.html") as resp:
            assert resp.headers["Content-Type"].startswith("text/html")
            assert resp.read() == b"<title>Hi</title>"
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(server.base_url + "/missing.html")


@pytest.mark.parametrize(
    ("spec", "mode", "search", "hide"),
    [
        ("react", "react", None, False),
        ("code", "code", None, False),
        ("hybrid", "hybrid", None, False),
        ("code+search", "code", None, True),
        ("hybrid+search", "hybrid", None, True),
        ("react+load", "react", "load", True),
        ("react+search", "react", "load", True),
        ("react+proxy", "react", "proxy", True),
    ],
)
def test_parse_mode(spec: str, mode: str, search: str | None, hide: bool) -> None:
    parsed = parse_mode(spec)
    assert (parsed.mode, parsed.search, parsed.hide) == (mode, search, hide)


@pytest.mark.parametrize("bad", ["agent", "code+proxy", "react+fast", "react,react", ""])
def test_parse_modes_rejects_bad_specs(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_modes(bad)


def test_mode_settings_hide_tools_but_keep_hybrid_direct_ones(tmp_path: Path) -> None:
    task = select(builtin_suite(), ["api_multihop"])[0]
    facts = task.build(tmp_path, 1)
    tools = task.tools(TaskEnv(tmp_path, 1, facts))
    react = parse_mode("react").mode_settings(task, tools)
    assert (react.name, react.visible, react.options) == ("react", None, {})
    hybrid = parse_mode("hybrid+search").mode_settings(task, tools)
    assert hybrid.options["direct"] == ["find_person"] and hybrid.visible == ["find_person"]
    proxy = parse_mode("react+proxy").mode_settings(task, tools)
    assert proxy.visible == [] and proxy.options == {"search": "proxy"}


USER_TASKS = '''
from toolmode.bench import CheckResult, Task
from toolmode.bench.parse import has_number
from toolmode.tools import tool


@tool
def answer_source() -> int:
    """The number to report."""
    return 42


TASKS = [
    Task(
        name="forty_two",
        prompt="Call answer_source and report the number.",
        build=lambda workspace, seed: {"n": 42},
        tools=lambda env: [answer_source],
        check=lambda answer, workspace, facts: CheckResult(has_number(answer, facts["n"]), "n"),
    )
]
'''


def test_load_tasks_from_a_user_file(tmp_path: Path) -> None:
    path = tmp_path / "my_tasks.py"
    path.write_text(USER_TASKS)
    (task,) = load_tasks(path)
    assert task.name == "forty_two"
    assert task.check("It is 42.", tmp_path, {"n": 42}).ok
    assert not task.check("It is 41.", tmp_path, {"n": 42}).ok


def test_load_tasks_requires_a_tasks_list(tmp_path: Path) -> None:
    path = tmp_path / "empty.py"
    path.write_text("X = 1\n")
    with pytest.raises(ValueError, match="TASKS"):
        load_tasks(path)
