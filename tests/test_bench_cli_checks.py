"""`toolmode bench` refuses what it cannot do in one line and exit status 2, before writing anything.

Most cases call `bench_main` in-process (fast); a few run the real `python -m toolmode bench` to see
exactly what a user sees (one line on stderr, no traceback).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from toolmode.bench.cli import bench_main
from toolmode.bench.results import BenchDirError, ResultsFile, read_results

SRC = str(Path(__file__).resolve().parents[1] / "src")
MY_TASK = """\
from toolmode.bench import CheckResult, Task

TASKS = [Task(name="mine", prompt="say hi", build=lambda ws, seed: {}, tools=lambda env: [],
              check=lambda answer, ws, facts: CheckResult(True))]
"""


@pytest.fixture
def bench(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Callable[..., subprocess.CompletedProcess[str]]:
    """`bench(*args, cwd=...)`: run bench_main in-process in `cwd`; its exit status and output."""
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)

    def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        monkeypatch.chdir(cwd)
        capsys.readouterr()
        argv = [*args, "--no-progress"]
        try:
            status = bench_main(argv)
        except SystemExit as exc:  # argparse refusing an option
            status = int(exc.code or 0)
        out = capsys.readouterr()
        return subprocess.CompletedProcess(argv, status, out.out, out.err)

    return run


def _process(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SRC}
    env.pop("DEEPSEEK_API_KEY", None)
    return subprocess.run(
        [sys.executable, "-m", "toolmode", "bench", *args, "--no-progress"],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def _one_line(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("toolmode bench: error: "), lines
    assert "Traceback" not in proc.stdout + proc.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with a user task file, bad task files, a foreign folder and a finished scripted bench."""
    root = tmp_path_factory.mktemp("checks")
    (root / "mine.py").write_text(MY_TASK)
    (root / "syntax.py").write_text("TASKS = [\n")
    (root / "raises.py").write_text("import json\n\nraise RuntimeError('broken on import')\n")
    (root / "empty.py").write_text("TASKS = []\n")
    (root / "escape.py").write_text(MY_TASK.replace('name="mine"', 'name="../../escape"'))
    (root / "nocheck.py").write_text(MY_TASK.replace("check=lambda answer, ws, facts: CheckResult(True)", "check=3"))
    (root / "foreign").mkdir()
    (root / "foreign" / "notes.txt").write_text("mine, not a bench")
    (root / "a-file").write_text("x")
    (root / "no-results").mkdir()
    (root / "no-results" / "bench.json").write_text("{}")
    (root / "bad-settings").mkdir()
    (root / "bad-settings" / "bench.json").write_text("{not json")
    (root / "bad-runs").mkdir()
    (root / "bad-runs" / "bench.json").write_text(json.dumps({"tasks": "log_stats", "runs": "three"}))
    assert bench_main(["--scripted", "--tasks", "log_stats", "--modes", "code", "--runs", "1",
                       "--out", str(root / "done"), "--no-progress", "--no-charts"]) == 0  # fmt: skip
    return root


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--report", "nowhere"], ["nowhere", "no such folder"]),
        (["--report", "foreign"], ["no results yet"]),
        (["--report", "no-results"], ["no results yet"]),
        (["--report", "a-file"], ["a file"]),
        (["--scripted", "--tasks", "log_stats", "--runs", "0"], ["--runs 0", "at least 1"]),
        (["--scripted", "--tasks", "log_stats", "--runs", "-1"], ["--runs -1"]),
        (["--scripted", "--tasks", "log_stats", "--jobs", "0"], ["--jobs 0"]),
        (["--scripted", "--tasks", "log_stats", "--jobs", "-3"], ["--jobs -3"]),
        (["--scripted", "--tasks", "log_stats", "--max-steps", "0"], ["--max-steps 0"]),
        (["--scripted", "--tasks", "log_stats", "--max-result-chars", "-1"], ["--max-result-chars -1"]),
        (["--runs", "three"], ["--runs", "invalid int value"]),
        (["--seed", "1.5"], ["--seed"]),
        (["--sandbox", "docker"], ["--sandbox", "invalid choice"]),
        (["--no-such-flag"], ["--no-such-flag"]),
        (["--scripted", "--modes", "react,react"], ["--modes", "duplicate"]),
        (["--scripted", "--modes", ","], ["--modes", "no modes"]),
        (["--scripted", "--modes", "code+proxy"], ["--modes", "proxy"]),
        (["--scripted", "--tasks", "nope"], ["unknown task", "nope"]),
        (["--scripted", "--only", "nope"], ["unknown task", "nope"]),
        (["--scripted", "--tasks", "mine.py"], ["no scripted player for task mine"]),
        (["--tasks", "missing.py", "--base-url", "http://127.0.0.1:9/v1"], ["missing.py", "does not exist"]),
        (["--tasks", "syntax.py", "--base-url", "http://127.0.0.1:9/v1"], ["syntax.py line", "syntax error"]),
        (["--tasks", "raises.py", "--base-url", "http://127.0.0.1:9/v1"], ["raises.py line 3", "broken on import"]),
        (["--tasks", "empty.py", "--base-url", "http://127.0.0.1:9/v1"], ["no tasks"]),
        (["--tasks", "escape.py", "--base-url", "http://127.0.0.1:9/v1"], ["'../../escape'", "folder"]),
        (["--tasks", "nocheck.py", "--base-url", "http://127.0.0.1:9/v1"], ["check must be a function"]),
        (["--failing", "--tasks", "log_stats"], ["--failing needs --scripted"]),
        (["--tasks", "log_stats", "--base-url", "localhost:8080"], ["--base-url", "http(s) URL"]),
        (["--tasks", "log_stats", "--base-url", "http://127.0.0.1:70000/v1"], ["--base-url", "port"]),
        (["--tasks", "log_stats", "--preset", "nope"], ["unknown preset"]),
        (["--tasks", "log_stats"], ["DEEPSEEK_API_KEY"]),
        (["--resume", "nowhere"], ["cannot resume nowhere", "does not exist"]),
        (["--resume", "foreign"], ["cannot resume foreign", "not a toolmode bench"]),
        (["--resume", "a-file"], ["cannot resume a-file", "is a file"]),
        (["--resume", "bad-settings"], ["bench.json"]),
        (["--resume", "bad-runs"], ["--runs 'three'", "saved in bad-runs/bench.json"]),
        (["--resume", "done", "--out", "foreign"], ["different folders"]),
        (["--scripted", "--out", "foreign"], ["foreign", "not a toolmode bench"]),
        (["--scripted", "--out", "a-file"], ["a-file", "is a file"]),
        (["--out", "done", "--seed", "7"], ["--seed 7 (saved: 0)", "--mix-settings"]),
        (["--out", "done", "--base-url", "http://127.0.0.1:9/v1"], ["--base-url", "(saved: not set)"]),
        (["--resume", "done", "--max-steps", "3"], ["--max-steps 3 (saved: 12)"]),
    ],
)  # fmt: skip
def test_every_bad_input_is_one_line_and_exit_2(
    place: Path, bench: Callable[..., subprocess.CompletedProcess[str]], args: list[str], said: list[str]
) -> None:
    before = sorted(p.name for p in place.iterdir())
    _one_line(bench(*args, cwd=place), *said)
    assert sorted(p.name for p in place.iterdir()) == before  # nothing was created
    assert not (place / "foreign" / "bench.json").exists()


@pytest.mark.parametrize(
    "args", [["--report", "no-results"], ["--runs", "x"], ["--scripted", "--tasks", "mine.py"], ["--resume", "nowhere"]]
)
def test_the_real_command_prints_one_line_without_a_traceback(place: Path, args: list[str]) -> None:
    _one_line(_process(*args, cwd=place))


def test_mix_settings_continues_a_bench_with_other_settings(
    place: Path, bench: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    proc = bench("--out", "done", "--max-steps", "6", "--runs", "1", "--mix-settings", "--no-charts", cwd=place)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((place / "done" / "bench.json").read_text())["max_steps"] == 6


def test_resume_may_add_runs_tasks_and_modes(tmp_path: Path) -> None:
    out = tmp_path / "b"
    common = ["--no-progress", "--no-charts"]
    assert bench_main(["--scripted", "--tasks", "log_stats", "--modes", "code", "--runs", "1", "--out", str(out),
                       *common]) == 0  # fmt: skip
    assert bench_main(["--out", str(out), "--modes", "code,react", "--runs", "2", *common]) == 0
    assert sorted((r["mode"], r["run"]) for r in read_results(out)) == [
        ("code", 1), ("code", 2), ("react", 1), ("react", 2)
    ]  # fmt: skip


def _records(n: int) -> str:
    return "".join(json.dumps({"task": "t", "mode": "code", "run": k, "ok": True}) + "\n" for k in range(1, n + 1))


def test_a_corrupt_results_line_is_named_and_stops_report_and_resume(
    place: Path, bench: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    folder = place / "corrupt"
    folder.mkdir()
    (folder / "bench.json").write_text(json.dumps({"tasks": "log_stats", "modes": "code", "runs": 1, "scripted": True}))
    (folder / "results.jsonl").write_text(_records(2) + "not json at all\n" + _records(1))
    with pytest.raises(BenchDirError, match=r"results.jsonl line 3 is not an episode record"):
        read_results(folder)
    _one_line(bench("--report", "corrupt", cwd=place), "line 3")
    _one_line(bench("--resume", "corrupt", cwd=place), "line 3")
    (folder / "results.jsonl").write_text(_records(1) + '{"task": "t", "mode": "code"}\n')  # no run
    _one_line(bench("--report", "corrupt", cwd=place), "line 2")
    (folder / "results.jsonl").write_bytes(b"\xff\xfe\n")
    _one_line(bench("--report", "corrupt", cwd=place), "cannot read")
    (folder / "results.jsonl").unlink()
    (folder / "results.jsonl").mkdir()
    _one_line(bench("--report", "corrupt", cwd=place), "cannot read", "directory")


def test_a_torn_last_line_is_skipped_and_cut_before_the_next_record(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text(_records(2) + '{"task": "t", "mode": "co')  # a crash while writing run 3
    assert [r["run"] for r in read_results(tmp_path)] == [1, 2]
    ResultsFile(tmp_path).append({"task": "t", "mode": "code", "run": 3, "ok": False})
    assert [r["run"] for r in read_results(tmp_path)] == [1, 2, 3]
    assert path.read_text().count("\n") == 3
    path.write_text(_records(1).rstrip("\n"))  # a whole record that lost its newline is kept
    ResultsFile(tmp_path).append({"task": "t", "mode": "code", "run": 2, "ok": False})
    assert [r["run"] for r in read_results(tmp_path)] == [1, 2]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any folder")
def test_an_unreadable_bench_folder_is_one_line(
    place: Path, bench: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    locked = place / "locked"
    locked.mkdir()
    (locked / "results.jsonl").write_text(_records(1))
    locked.chmod(0)
    try:
        _one_line(bench("--report", "locked", cwd=place))
        _one_line(bench("--resume", "locked", cwd=place))
    finally:
        locked.chmod(0o755)


def test_an_unwritable_out_folder_is_one_line(
    place: Path, bench: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    _one_line(bench("--scripted", "--tasks", "log_stats", "--out", "a-file/inside", cwd=place), "a-file/inside")


def test_list_prints_a_user_prompt_with_brackets_as_it_is(
    place: Path, bench: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    (place / "brackets.py").write_text(MY_TASK.replace('prompt="say hi"', 'prompt="say [bold]hi[/x] [/]"'))
    proc = bench("--tasks", "brackets.py", "--list", cwd=place)
    assert proc.returncode == 0, proc.stderr
    assert "say [bold]hi[/x] [/]" in proc.stdout
    (place / "brackets.py").unlink()


def test_a_record_with_values_of_the_wrong_type_is_refused_or_ignored(
    place: Path, bench: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    folder = place / "odd"
    folder.mkdir()
    good = {"task": "t", "mode": "code", "run": 1, "ok": True, "steps": "many", "step_prompt_tokens": "xyz",
            "prompt_tokens": None, "cost": "free"}  # fmt: skip
    (folder / "results.jsonl").write_text(json.dumps(good) + "\n")
    proc = bench("--report", "odd", "--no-charts", cwd=place)
    assert proc.returncode == 0, proc.stderr  # odd measures are left out, the report stands
    for bad in ({"task": 5, "mode": "code", "run": 1}, {"task": "t", "mode": "code", "run": True},
                {"task": "t", "mode": None, "run": 1}, ["t", "code", 1]):  # fmt: skip
        (folder / "results.jsonl").write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
        _one_line(bench("--report", "odd", cwd=place), "line 2")
