"""A resumed bench trusts from its bench.json (which the model's code can edit) only what this user signed.

The attacks of issue 16, item 6, done the way a program in the workspace would: bench.json pointed at a
planted task file (imported unconfined, with the API key in its environment), or at a server of the
program's choosing (it would receive `Authorization: Bearer <key>`). Also: the state key itself, and a
task file changed after the bench started.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from toolmode import hostkey
from toolmode.bench.cli import bench_main
from toolmode.bench.results import read_results
from toolmode.bench.source import _load
from toolmode.bench.trust import SIGNATURE
from toolmode.testing import ScriptedModelServer, reply

COMMON = ["--modes", "code", "--runs", "1", "--no-progress", "--no-charts"]
TASK_FILE = """\
import pathlib
with open({marker!r}, "a") as f:
    f.write("imported\\n")
from toolmode.bench.suite import builtin_suite
TASKS = [t for t in builtin_suite() if t.name == "log_stats"]
"""


def _task_file(where: Path, marker: Path) -> Path:
    path = where / "my_tasks.py"
    path.write_text(TASK_FILE.format(marker=str(marker)))
    return path


def _imports(marker: Path) -> int:
    return len(marker.read_text().splitlines()) if marker.exists() else 0


def _edit(bench: Path, **changes: Any) -> None:
    """Edit bench.json as a program would (it cannot sign)."""
    path = bench / "bench.json"
    settings = json.loads(path.read_text())
    for key, value in changes.items():
        if value is None:
            settings.pop(key, None)
        else:
            settings[key] = value
    path.write_text(json.dumps(settings))


@pytest.fixture(autouse=True)
def _fresh_task_cache() -> None:
    """Each bench_main call loads its tasks as a new `toolmode bench` process would (no per-process cache)."""
    _load.cache_clear()


@pytest.fixture
def bench(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A finished scripted bench of one built-in task, run in `tmp_path` (the project directory)."""
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "runs" / "bench-1"
    assert bench_main(["--scripted", "--tasks", "log_stats", *COMMON, "--out", str(out)]) == 0
    return out


def test_the_bench_saves_signed_settings_and_resumes_them(bench: Path) -> None:
    settings = json.loads((bench / "bench.json").read_text())
    assert isinstance(settings[SIGNATURE], str) and len(settings[SIGNATURE]) == 64
    assert bench_main(["--resume", str(bench), "--runs", "2", "--no-progress", "--no-charts"]) == 0
    assert sorted(r["run"] for r in read_results(bench)) == [1, 2]


@pytest.mark.parametrize("signature", ["kept", "removed"])
def test_a_planted_task_file_named_in_bench_json_is_never_imported(
    bench: Path, tmp_path: Path, signature: str, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "imported.txt"
    planted = _task_file(tmp_path, marker)
    _edit(bench, tasks=str(planted), **({SIGNATURE: None} if signature == "removed" else {}))
    assert bench_main(["--resume", str(bench), "--no-progress", "--no-charts"]) == 2
    err = capsys.readouterr().err
    assert "not signed by you" in err and f"--tasks (saved: {planted})" in err
    assert _imports(marker) == 0
    # the user's own command line decides: named there, the file is imported
    _load.cache_clear()
    assert bench_main(["--resume", str(bench), "--tasks", str(planted), "--no-progress", "--no-charts"]) == 0
    assert _imports(marker) >= 1


def test_an_endpoint_named_in_bench_json_gets_no_request(
    bench: Path, scripted: Callable[..., ScriptedModelServer], monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("TOOLMODE_TEST_KEY", "sk-hoststate-secret-0123456789")
    elsewhere = scripted([reply("done")] * 4)
    _edit(bench, scripted=False, base_url=elsewhere.base_url, api_key_env="TOOLMODE_TEST_KEY", model="m")
    assert bench_main(["--resume", str(bench), "--runs", "2", "--no-progress", "--no-charts"]) == 2
    err = capsys.readouterr().err
    assert "--base-url (saved: " in err and "--api-key-env (saved: TOOLMODE_TEST_KEY)" in err
    assert elsewhere.requests == []


def test_an_unsigned_bench_of_built_in_tasks_still_resumes(bench: Path) -> None:
    _edit(bench, **{SIGNATURE: None})  # e.g. written by an older toolmode: nothing in it imports or sends a key
    assert bench_main(["--resume", str(bench), "--runs", "2", "--no-progress", "--no-charts"]) == 0


def test_a_task_file_changed_since_the_start_is_named_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    marker = tmp_path / "imported.txt"
    tasks = _task_file(tmp_path, marker)
    out = tmp_path / "runs" / "bench-1"
    assert bench_main(["--scripted", "--tasks", str(tasks), *COMMON, "--out", str(out)]) == 0
    imported = _imports(marker)
    with tasks.open("a") as f:
        f.write("import os  # changed by a program in the workspace\n")
    assert bench_main(["--resume", str(out), "--no-progress", "--no-charts"]) == 2
    assert "is not the one this bench started with" in capsys.readouterr().err
    assert _imports(marker) == imported
    _load.cache_clear()
    assert bench_main(["--resume", str(out), "--tasks", str(tasks), "--no-progress", "--no-charts"]) == 0
    assert _imports(marker) > imported


def test_a_key_in_the_base_url_is_never_saved_and_must_be_given_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scripted: Callable[..., ScriptedModelServer],
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    server = scripted([reply("I cannot tell.")] * 4)
    secret = "sk-userinfo-secret-abcdef0123456789"
    url = server.base_url.replace("http://", f"http://user:{secret}@")
    out = tmp_path / "runs" / "bench-1"
    assert bench_main(["--tasks", "log_stats", *COMMON, "--base-url", url, "--model", "m", "--jobs", "1",
                       "--out", str(out)]) == 0  # fmt: skip
    written = [p for p in out.rglob("*") if p.is_file()]
    traces = [p for p in written if p.name.endswith(".jsonl") and "episodes" in p.parts]
    assert traces and "[REDACTED]@127.0.0.1" in traces[0].read_text()  # the URL was there, without its key
    for path in written:
        assert secret.encode() not in path.read_bytes(), path
    assert "[REDACTED]@127.0.0.1" in json.loads((out / "bench.json").read_text())["base_url"]
    assert bench_main(["--resume", str(out), "--runs", "2", "--no-progress", "--no-charts"]) == 2
    assert "give --base-url again" in capsys.readouterr().err
    assert bench_main(["--resume", str(out), "--runs", "2", "--base-url", url, "--jobs", "1", "--no-progress",
                       "--no-charts"]) == 0  # fmt: skip


def test_the_state_key_is_private_and_outside_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    (tmp_path / "project").mkdir()
    monkeypatch.chdir(tmp_path / "project")
    payload = {"tasks": "a.py"}
    signature = hostkey.sign("test", payload)
    key = hostkey.key_path()
    assert signature is not None and key.stat().st_mode & 0o777 == 0o600
    assert hostkey.verify("test", payload, signature) is None
    assert hostkey.verify("test", {"tasks": "b.py"}, signature) == "its signature does not match its content"
    assert hostkey.verify("other kind", payload, signature) is not None
    os.chmod(key, 0o644)
    assert "can be read by others" in str(hostkey.verify("test", payload, signature))
    os.chmod(key, 0o600)
    monkeypatch.chdir(tmp_path)  # the key now lies inside the current directory (a workspace)
    assert "inside the current directory" in str(hostkey.verify("test", payload, signature))
    assert hostkey.sign("test", payload) is None
