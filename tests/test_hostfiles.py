"""Host output files (traces, bench results, reports) never follow a link planted where model code writes."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from toolmode import Agent, hostfiles, tool
from toolmode.bench.results import BenchDirError, ResultsFile, read_results, read_settings, write_settings
from toolmode.bench.tasks.files import check_inventory
from toolmode.testing import reply
from toolmode.trace import MemorySink, open_trace_file


@tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@pytest.fixture(autouse=True, params=[None, False], ids=["openat2-if-available", "component-walk"])
def _resolution(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs with the kernel's openat2 (where it exists) and with the fallback walk."""
    from toolmode.tools import safe_open

    monkeypatch.setattr(safe_open, "USE_OPENAT2", request.param)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    where = tmp_path / "outside"
    where.mkdir()
    (where / "keep.txt").write_text("keep")
    return where


def _listing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_runs_symlink_is_refused_and_nothing_is_written_through_it(tmp_path: Path, outside: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "runs").symlink_to(outside)
    monkeypatch.chdir(ws)
    sink, problem = open_trace_file("runs", "react")
    assert sink is None and problem is not None
    assert "symlink 'runs'" in problem and "\n" not in problem
    with pytest.raises(hostfiles.UnsafeHostPath):
        write_settings(Path("runs/bench-x"), {"tasks": "x"})
    assert _listing(outside) == ["keep.txt"]


def test_a_dangling_runs_link_does_not_break_a_run(scripted, tmp_path: Path, outside: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "runs").symlink_to(outside / "made-by-host")
    monkeypatch.chdir(ws)
    server = scripted([reply("done"), reply("again")])
    events = MemorySink()
    with Agent(tools=[echo], model="m", base_url=server.base_url, runs_dir="runs", sinks=[events]) as agent:
        first = agent.run("one")
        second = agent.run("two")
    assert (first.answer, second.answer) == ("done", "again")
    assert first.trace_path is None and second.trace_path is None
    notices = [e.data["message"] for e in events.of("notice")]
    assert len(notices) == 2 and all("no trace file written" in n and "symlink 'runs'" in n for n in notices)
    assert _listing(outside) == ["keep.txt"]  # the link's target was not created
    assert (ws / "runs").is_symlink()


def test_a_link_anywhere_below_the_current_directory_is_refused(tmp_path: Path, outside: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "deep").symlink_to(outside)
    with pytest.raises(hostfiles.UnsafeHostPath, match="symlink 'deep'"):
        hostfiles.append_text("runs/deep/bench/results.jsonl", "x\n")
    with pytest.raises(hostfiles.UnsafeHostPath):
        hostfiles.append_text("runs/x/../deep/results.jsonl", "x\n")  # `..` is not a way around it
    assert _listing(outside) == ["keep.txt"]
    hostfiles.append_text("runs/real/results.jsonl", "ok\n")  # real directories are made as needed
    assert (tmp_path / "runs" / "real" / "results.jsonl").read_text() == "ok\n"


def test_an_absolute_path_follows_its_parent_but_not_its_last_component(tmp_path: Path, outside: Path) -> None:
    (tmp_path / "via").symlink_to(outside)
    hostfiles.write_text(tmp_path / "via" / "runs" / "ok.txt", "fine")  # above the directory: followed
    assert (outside / "runs" / "ok.txt").read_text() == "fine"
    (tmp_path / "leaf").symlink_to(outside)
    with pytest.raises(hostfiles.UnsafeHostPath):
        hostfiles.write_text(tmp_path / "leaf" / "x.txt", "no")
    (tmp_path / "file-link").symlink_to(outside / "keep.txt")
    with pytest.raises(hostfiles.UnsafeHostPath, match="is a symlink"):
        hostfiles.write_text(tmp_path / "file-link", "pwned")
    assert (outside / "keep.txt").read_text() == "keep"


def test_hard_links_and_fifos_are_refused_without_blocking(tmp_path: Path, outside: Path) -> None:
    bench = tmp_path / "bench"
    bench.mkdir()
    os.link(outside / "keep.txt", bench / "results.jsonl")
    with pytest.raises(hostfiles.UnsafeHostPath, match="2 hard links"):
        ResultsFile(bench).append({"task": "t", "mode": "m", "run": 1})
    os.link(outside / "keep.txt", bench / "bench.json")
    with pytest.raises(hostfiles.UnsafeHostPath, match="3 hard links"):
        write_settings(bench, {"x": 1})  # would have truncated keep.txt
    assert (outside / "keep.txt").read_text() == "keep"
    fifo_dir = tmp_path / "fifo"
    fifo_dir.mkdir()
    os.mkfifo(fifo_dir / "results.jsonl")
    os.mkfifo(fifo_dir / "bench.json")
    done: list[object] = []

    def read() -> None:
        for fn in (read_results, read_settings):
            try:
                fn(fifo_dir)
            except (OSError, BenchDirError) as exc:  # the bench names the file it cannot read
                done.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(60)  # a bound for a broken build; it returns at once
    assert len(done) == 2 and all("is not a regular file" in str(e) for e in done), done


def test_remove_tree_does_not_follow_links(tmp_path: Path, outside: Path) -> None:
    episode = tmp_path / "episode"
    (episode / "workspace").mkdir(parents=True)
    (episode / "workspace" / "out").symlink_to(outside)
    hostfiles.remove_tree(episode)
    assert not episode.exists() and _listing(outside) == ["keep.txt"]
    (tmp_path / "link").symlink_to(outside)
    hostfiles.remove_tree(tmp_path / "link")
    assert not (tmp_path / "link").is_symlink() and _listing(outside) == ["keep.txt"]


def test_a_checker_does_not_read_through_a_planted_link_or_fifo(tmp_path: Path, outside: Path) -> None:
    (outside / "secret.csv").write_text("sku,total_qty\nA,1\n")
    (tmp_path / "report.csv").symlink_to(outside / "secret.csv")
    verdict = check_inventory("", tmp_path, {"rows": [["A", 1]]})
    assert not verdict.ok and "cannot be read" in verdict.reason
    (tmp_path / "report.csv").unlink()
    os.mkfifo(tmp_path / "report.csv")
    assert not check_inventory("", tmp_path, {"rows": [["A", 1]]}).ok  # returns: the FIFO is not opened to read
