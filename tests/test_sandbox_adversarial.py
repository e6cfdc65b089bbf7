"""Every program in tests/adversarial/ must be contained.

For each: the host survives (the programs try to kill it: this test process), nothing changes outside the
workspace (a sentinel directory next to it), no secret from the host's environment shows up in the
result or in the workspace, the sandbox still runs a program afterwards, and after close() no process of
any worker's session is left. `# expect: <text>` lines in a program name text its result must contain (and `# expect-not:` text it
must not; words like WROTE or SENT, which the programs print on success, must never appear), so each attack is shown to be refused for the intended reason, not by accident.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from host_health import host_state, same_host_state
from toolmode.sandbox import Sandbox, SandboxLimits, StubSpec, landlock

CORPUS = sorted((Path(__file__).parent / "adversarial").glob("*.py"))
SECRET = "sk-test-SECRET-3f9a7c1e"
LIMITS = SandboxLimits(timeout=2, memory_mb=256, file_size_mb=8, max_output=2000, max_tool_calls=50,
                       max_frame_bytes=1024 * 1024, max_write_mb=64)
ADD = StubSpec("add", ["a", "b"], "add(a, b)", "Add or concatenate.")

pytestmark = pytest.mark.skipif(landlock.abi_version() < 1, reason="needs Landlock")


def _tools(ws: Path) -> tuple[list[StubSpec], Any]:
    from toolmode.tools.builtin import builtin_tools

    tools = {t.name: t for t in builtin_tools(ws) if t.name in ("read_file", "write_file", "list_dir")}
    stubs = [StubSpec(t.name, list(t.parameters.get("properties", {})), t.signature(), t.description)
             for t in tools.values()] + [ADD]

    def call(name: str, kwargs: dict[str, Any]) -> Any:
        if name == "add":
            return kwargs["a"] + kwargs["b"]
        return tools[name](**kwargs)

    return stubs, call


def _sessions_alive(sids: list[int]) -> list[str]:
    alive = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[3]) in sids:  # field 6 of stat: session id
            alive.append(stat[:80])
    return alive


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() if p.is_file() else b"<dir>" for p in sorted(root.rglob("*"))}


def test_corpus_is_large_enough() -> None:
    assert len(CORPUS) >= 30


@pytest.mark.parametrize("program", CORPUS, ids=lambda p: p.stem)
def test_program_is_contained(program: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", SECRET)
    ws, sentinel = tmp_path / "ws", tmp_path / "sentinel"
    ws.mkdir()
    sentinel.mkdir()
    (sentinel / "keep.txt").write_text("keep")
    before = _snapshot(sentinel)
    host_before = host_state()
    source = program.read_text()
    code = source.replace("{{SENTINEL}}", str(sentinel)).replace("{{WORKSPACE}}", str(ws))
    expects = [line.split(":", 1)[1].strip() for line in source.splitlines() if line.startswith("# expect:")]
    refuses = [line.split(":", 1)[1].strip() for line in source.splitlines() if line.startswith("# expect-not:")]
    stubs, call = _tools(ws)

    sb = Sandbox(ws, LIMITS)
    try:
        result = sb.run(code, stubs, call)
        after = sb.run("print('still here')", stubs, call)
    finally:
        sb.close()
    text = result.text()

    assert expects, "every corpus program names what its result must show"
    for expected in expects:
        assert expected in text, f"{expected!r} not in result:\n{text}"
    for unexpected in refuses + ["WROTE", "CHANGED", "RAISED", "SENT", "OPENED", "pwned", "LATE OUTPUT"]:
        assert unexpected not in text, f"{unexpected!r} in result:\n{text}"
    assert SECRET not in text
    assert after.text() == "still here"
    assert _snapshot(sentinel) == before
    same_host_state(host_before, host_state())
    for path in ws.rglob("*"):
        if path.is_file() and path.stat().st_size < 10_000_000:
            assert SECRET.encode() not in path.read_bytes()
    assert _sessions_alive(sb.spawned_pids) == []
