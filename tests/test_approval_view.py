"""Approval events in `toolmode view`: the run page's timeline shows each request and decision (as text: the
model controls the arguments, a person's reason is shown as typed), checked in the loader and in headless Chromium."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.browser import Browser, missing
from tests.view_data import serving

from test_approval import agent_on, recording_tools
from toolmode.testing import calls, reply
from toolmode.view.folder import Folder, RunList

MARKUP = '<b onmouseover="window.__pwned=1">bold</b>'


def record(server: Any, folder: Path) -> Path:
    """A run stopped for approval, then resumed: one call approved with edits, one refused with a reason."""
    log: list[tuple[str, dict[str, Any]]] = []
    with agent_on(server, recording_tools(log), runs_dir=folder) as agent:
        first = agent.run("tidy")
        a, b = (p.call_id for p in first.pending)
        agent.resume(first.state(), decisions={a: {"arguments": {"path": "safe.txt"}}, b: f"no {MARKUP}"})
    assert log == [("delete_file", {"path": "safe.txt"})]
    return first.trace_path


@pytest.fixture
def recorded(scripted, tmp_path: Path) -> Path:
    server = scripted([calls(("delete_file", {"path": f"x{MARKUP}"}), ("delete_file", {"path": "y"})), reply("ok")])
    return record(server, tmp_path / "runs")


def test_the_timeline_has_the_requests_and_decisions(recorded: Path) -> None:
    folder = Folder(recorded.parent)
    try:
        stopped, resumed = RunList(folder).run(recorded.name)["runs"]
    finally:
        folder.close()
    asked = [i for s in stopped["steps"] for i in s["items"] if i["type"] == "approval"]
    assert [(i["phase"], i["tool"], i["waits_for"]) for i in asked] == [("request", "delete_file", "resume")] * 2
    decided = [i for s in resumed["steps"] for i in s["items"] if i["type"] == "approval"]
    decided.sort(key=lambda i: i["decision"])  # the two calls run at once: either decision may come first
    assert [(i["decision"], i["by"]) for i in decided] == [("approved", "resume"), ("denied", "resume")]
    assert decided[0]["arguments"] is not None and "safe.txt" in decided[0]["arguments"]
    assert decided[1]["reason"] == f"no {MARKUP}"
    assert stopped["unknown"] == {} and resumed["unknown"] == {}


@pytest.mark.skipif(missing() is not None, reason=f"no headless Chromium: {missing()}")
def test_the_run_page_shows_approvals_as_text(recorded: Path) -> None:
    browser = Browser(1280, 900)
    try:
        with serving(recorded.parent) as server:
            browser.open(f"{server.url}#/run?path={recorded.name}", "run")
            boxes = [t for t in browser.texts(".item.box") if "approv" in t or "refused" in t]
            assert any(t.startswith("approval asked: delete_file · waits for the resume") for t in boxes)
            assert any(t.startswith("approved: delete_file by resume") and "edited arguments" in t for t in boxes)
            assert any(t.startswith("refused: delete_file by resume") and t.endswith(f"no {MARKUP}") for t in boxes)
            assert browser.js("return typeof window.__pwned") == "undefined"
            assert browser.js("return document.querySelectorAll('#app b').length") == 0
            assert browser.console_errors() == []
    finally:
        browser.close()
