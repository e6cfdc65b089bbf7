"""Every program in tests/adversarial/ must be contained.

For each: the host survives (the programs try to kill it: this test process), nothing changes outside the
workspace (a sentinel directory next to it), no secret from the host's environment shows up in the
result or in the workspace, the sandbox still runs a program afterwards, and after close() no process of
any worker's session is left. `# expect: <text>` lines in a program name text its result must contain (and `# expect-not:` text it
must not; words like WROTE or SENT, which the programs print on success, must never appear), so each attack is shown to be refused for the intended reason, not by accident.

Also, after each program: the host writes what the CLI and the bench write in a workspace (`./runs` traces,
a bench directory) and reads them back, which must neither follow what the program planted nor hang; the
host's open files, threads and resource limits are as before; no process started for the run (worker or
run_shell) is left, and nothing grows the workspace any more. `# tools: a, b` offers more builtin tools
than read_file, write_file and list_dir (and `add`). `# persistent: yes` keeps the worker between runs.
`# limits: key=value, ...` sets the run's
SandboxLimits fields for one program; `# max-written-mb: N` bounds what the workspace may hold on disk
afterwards (blocks, and an inode per entry), right after the run and after close. `# absent: PATH` names a host
path that must not exist afterwards; `# setup-dir: NAME` a directory the workspace holds before the run;
`# cgroups: off` runs it without cgroups (the host's sampling alone holds tasks and memory).

On the host, before and after each program: the sentinel's files (a 0600 one with a secret in an extended
attribute, a 0666 one, a program that must not become setuid) and the device nodes and interpreter binary the
sandbox shows keep their mode, owner, times and extended attributes; a 0600 SysV segment of the host's stays
unread and unchanged; no SysV object and no mount in the workspace outlive the run.

Every program runs on every tier (namespaces built by bubblewrap or by unshare, and landlock), run_shell
inside it on the same one. `# expect[namespaces]:` and `# expect[landlock]:` lines hold for one tier only:
the same attack fails with FileNotFoundError where the host's path is not in the namespaces tier's view and
with PermissionError where Landlock refuses it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import resource
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from host_health import (
    HOST_SHM_TEXT,
    XATTR_SECRET,
    HostSegment,
    host_objects,
    host_state,
    plant,
    same_host_objects,
    same_host_state,
)
from sandbox_tiers import expectations
from toolmode import callscope
from toolmode.bench.results import ResultsFile, read_results, read_settings, write_settings
from toolmode.events import Notice
from toolmode.sandbox import Sandbox, SandboxLimits, StubSpec, landlock, runlimits, shell
from toolmode.sandbox.spawn import interpreter
from toolmode.trace import open_trace_file

CORPUS = sorted((Path(__file__).parent / "adversarial").glob("*.py"))
SECRET = "sk-test-SECRET-3f9a7c1e"
LIMITS = SandboxLimits(timeout=2, memory_mb=256, file_size_mb=8, max_output=2000, max_tool_calls=50,
                       max_frame_bytes=1024 * 1024, max_write_mb=64)
ADD = StubSpec("add", ["a", "b"], "add(a, b)", "Add or concatenate.")
INODE_DISK_BYTES = 256  # ext4's on-disk inode

pytestmark = pytest.mark.skipif(landlock.abi_version() < 1, reason="needs Landlock")
def _tools(ws: Path, extra: list[str]) -> tuple[list[StubSpec], Any]:
    from toolmode.tools.builtin import builtin_tools

    wanted = ("read_file", "write_file", "list_dir", *extra)
    tools = {t.name: t for t in builtin_tools(ws) if t.name in wanted}
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


def _workspace_processes(ws: Path) -> list[str]:
    """Processes whose working directory is in the workspace: only the run's worker and shells start there."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cwd = os.readlink(f"/proc/{entry}/cwd")
            except OSError:
                continue
            if Path(cwd).is_relative_to(ws) and Path(f"/proc/{entry}/stat").read_text().split(") ", 1)[1][0] != "Z":
                found.append(f"{entry}: {Path(f'/proc/{entry}/cmdline').read_bytes()[:80]!r}")
    return found


def _charged(root: Path) -> int:
    """What the workspace holds on disk: every entry's blocks (files' data, directories' entries) plus an
    on-disk inode (INODE_DISK_BYTES) per entry."""
    total = root.lstat().st_blocks * 512
    for path in root.rglob("*"):
        total += INODE_DISK_BYTES + path.lstat().st_blocks * 512
    return total


def _host_state() -> dict[str, Any]:
    """The host process's open files, threads and resource limits."""
    fds = {}
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # the listing's own descriptor is gone by now
            fds[fd] = os.readlink(f"/proc/self/fd/{fd}")
    limits = {name: resource.getrlimit(getattr(resource, name)) for name in dir(resource) if name.startswith("RLIMIT_")}
    return {"fds": fds, "threads": set(os.listdir("/proc/self/task")), "limits": limits}


def _host_outputs_after(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the CLI and the bench write into `./runs` of a workspace, written and read back the host's way.

    Each may be refused (a planted link); none may follow it or hang.
    """
    monkeypatch.chdir(ws)
    sink, _ = open_trace_file("runs", "adversarial")
    if sink is not None:
        sink.emit(Notice("probe from the host"))
        sink.close()
    bench = Path("runs") / "bench-adversarial"
    for step in (lambda: write_settings(bench, {"tasks": "probe"}),
                 lambda: ResultsFile(bench).append({"task": "t", "mode": "m", "run": 1}),
                 lambda: read_results(bench), lambda: read_settings(bench)):
        with contextlib.suppress(OSError, ValueError):
            step()


@pytest.fixture(scope="module", autouse=True)
def _warm(tmp_path_factory: pytest.TempPathFactory) -> None:
    """One run first, so the long-lived spawner thread exists before any host state is compared; one
    run_shell too, so the launcher's sealed in-memory code (a memfd kept open) exists already."""
    warm = tmp_path_factory.mktemp("warm")
    with Sandbox(warm, LIMITS) as sb:
        sb.run("pass", [], lambda n, k: None)
    shell.run_confined("true", workspace=warm, timeout=20)


@pytest.fixture(scope="module")
def host_segment() -> Iterator[HostSegment]:
    """A 0600 SysV segment of the host's, for the whole corpus: no program may read or change it."""
    segment = HostSegment()
    try:
        yield segment
    finally:
        segment.remove()


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() if p.is_file() else b"<dir>" for p in sorted(root.rglob("*"))}


def test_corpus_is_large_enough() -> None:
    assert len(CORPUS) >= 30


@pytest.mark.parametrize("program", CORPUS, ids=lambda p: p.stem)
def test_program_is_contained(program: Path, tier: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                              host_segment: HostSegment) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", SECRET)
    ws, sentinel = tmp_path / "ws", tmp_path / "sentinel"
    ws.mkdir()
    sentinel.mkdir()
    (sentinel / "keep.txt").write_text("keep")
    plant(sentinel)
    source = program.read_text()
    for name in expectations(source, "setup-dir", tier):  # directories the workspace holds before the run
        (ws / name).mkdir(parents=True)
    if any(line.replace(" ", "") == "#cgroups:off" for line in source.splitlines()):
        monkeypatch.setattr(runlimits, "ENABLED", False)  # the fallback: the host samples the run
    before = _snapshot(sentinel)
    host_before = host_state()
    objects_before = host_objects(sentinel, ws, interpreter())
    segment_before = host_segment.stat()
    code = source.replace("{{SENTINEL}}", str(sentinel)).replace("{{WORKSPACE}}", str(ws))
    expects = expectations(source, "expect", tier)
    refuses = expectations(source, "expect-not", tier)
    limits = LIMITS
    for line in source.splitlines():
        if line.startswith("# limits:"):
            fields = dict(item.split("=") for item in line.split(":", 1)[1].replace(" ", "").split(","))
            limits = dataclasses.replace(LIMITS, **{k: type(getattr(LIMITS, k))(v) for k, v in fields.items()})
    bounds = [int(line.split(":", 1)[1]) for line in source.splitlines() if line.startswith("# max-written-mb:")]
    absent = [Path(p.replace("{{SENTINEL}}", str(sentinel)).replace("{{WORKSPACE}}", str(ws)))
              for p in expectations(source, "absent", tier)]
    for path in absent:
        path.unlink(missing_ok=True)
    extra = [name.strip() for line in source.splitlines() if line.startswith("# tools:")
             for name in line.split(":", 1)[1].split(",")]
    stubs, call = _tools(ws, extra)
    persistent = any(line.replace(" ", "") == "#persistent:yes" for line in source.splitlines())
    process_before = _host_state()

    sb = Sandbox(ws, limits, persistent=persistent, policy=tier)
    try:
        result = sb.run(code, stubs, call)
        written = _charged(ws)
        after = sb.run("print('still here')", stubs, call)
    finally:
        sb.close()
    assert callscope.join_abandoned(60) == []  # a bound to wait, not a timed assert: they end at once
    grown = _charged(ws)
    assert _workspace_processes(ws) == []
    assert not shell._live
    assert _charged(ws) == grown, "something kept writing in the workspace after the run ended"
    _host_outputs_after(ws, monkeypatch)
    process_after = _host_state()
    text = result.text()

    assert expects, "every corpus program names what its result must show"
    for expected in expects:
        assert expected in text, f"{expected!r} not in result:\n{text}"
    for unexpected in refuses + ["WROTE", "CHANGED", "RAISED", "SENT", "OPENED", "pwned", "LATE OUTPUT"]:
        assert unexpected not in text, f"{unexpected!r} in result:\n{text}"
    assert SECRET not in text and XATTR_SECRET not in text and HOST_SHM_TEXT.decode() not in text
    assert [p for p in absent if p.exists()] == [], "the program changed the host outside the workspace"
    same_host_objects(objects_before, host_objects(sentinel, ws, interpreter()))
    assert host_segment.stat() == segment_before, "the host's SysV segment was attached to or changed"
    assert host_segment.text() == HOST_SHM_TEXT
    assert after.text() == "still here"
    assert _snapshot(sentinel) == before
    same_host_state(host_before, host_state())
    for path in ws.rglob("*"):
        if path.is_file() and path.stat().st_size < 10_000_000:
            assert SECRET.encode() not in path.read_bytes()
    assert _sessions_alive(sb.spawned_pids) == []
    for bound in bounds:
        held = max(written, grown)
        assert held <= bound * 1024 * 1024, f"the workspace holds {held / 2**20:.1f} MiB, over {bound} MiB"
    assert {k: v for k, v in process_after["fds"].items() if process_before["fds"].get(k) != v} == {}
    new_threads = process_after["threads"] - process_before["threads"]
    assert [Path(f"/proc/self/task/{t}/comm").read_text().strip() for t in new_threads if Path(f"/proc/self/task/{t}").exists()] == []
    assert process_after["limits"] == process_before["limits"]
