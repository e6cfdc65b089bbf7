"""Process count and memory are bounded for a run as a whole, also as root (runlimits.py).

The programs in tests/adversarial/limits/ are run through run_confined (`run_shell`) under each layer this
host offers: a per-run cgroup, and the host's supervisor (forced by runlimits.ENABLED = False). A sampler
thread here counts the run's tasks and adds up their proportional anonymous memory (Pss_Anon) every few
milliseconds, independently of the mechanism, so "the totals stayed under the limits" is measured, not
taken from the cgroup's own books. Control runs with loose limits show the sampler sees the totals the
attack reaches when nothing stops it.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from host_health import host_state, same_host_state
from toolmode.sandbox import Sandbox, SandboxLimits, landlock, runlimits, tiers
from toolmode.sandbox.shell import run_confined

PROGRAMS = Path(__file__).parent / "adversarial" / "limits"
MiB = 1024 * 1024
HAS_CGROUPS = set(runlimits.hierarchies()) == set(runlimits.CONTROLLERS)

pytestmark = pytest.mark.skipif(landlock.abi_version() < 1, reason="needs Landlock")


class Sampler:
    """Peak tasks and peak summed Pss_Anon of the run in `workspace`: the session led by a child of this
    process (the launcher; in the namespaces tier bubblewrap or the waiter, whose child is the namespace's
    init: those two are toolmode's own and not counted) whose working directory is the workspace."""

    def __init__(self, workspace: Path, namespaces: bool = False, release_after: str | None = None) -> None:
        self.workspace = str(workspace.resolve())
        self.namespaces = namespaces
        self.release_after = release_after  # once this file exists, sample once more, then create `release`
        self.max_tasks = 0
        self.max_anon = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        me = os.getpid()
        marker = Path(self.workspace, self.release_after) if self.release_after else None
        passes_since_marker = 0
        previous: dict[int, int] = {}
        while not self._stop.is_set():
            if marker is not None and marker.exists():  # the program holds its peak from now on
                passes_since_marker += 1
            stats = {}
            for entry in os.listdir("/proc"):
                if entry.isdigit():
                    try:
                        stats[int(entry)] = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
                    except OSError:
                        continue
            leaders = {pid for pid, f in stats.items() if int(f[1]) == me and int(f[3]) == pid
                       and _cwd(pid) == self.workspace}
            ours = leaders | {pid for pid, f in stats.items() if int(f[1]) in leaders} if self.namespaces else set()
            members = [pid for pid, f in stats.items() if int(f[3]) in leaders and pid not in ours]
            tasks = sum(int(stats[pid][17]) for pid in members)
            current: dict[int, int] = {}
            for pid in members:
                try:
                    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                        if line.startswith("Pss_Anon:"):
                            current[pid] = int(line.split()[1]) * 1024
                except (OSError, ValueError):
                    continue
            self.max_tasks = max(self.max_tasks, tasks)
            # Processes are read one after another: within one pass, a child killed after it was read and the
            # child that then took its memory would both count. Each process counts the smaller of its readings
            # in two passes in a row: a block is held, then freed (never regained), so a process that shows its
            # block in both passes held it at every moment between them, at the same time as the others that do.
            self.max_anon = max(self.max_anon, sum(min(v, previous.get(pid, 0)) for pid, v in current.items()))
            previous = current
            if passes_since_marker >= 2:  # two passes saw the peak: let the program end
                Path(self.workspace, "release").touch()
                marker = None
                passes_since_marker = 0
            time.sleep(0.003)  # the sampler's own pace (it measures; nothing waits on it by time)


def _cwd(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return None


@pytest.fixture(params=["cgroup", "supervisor"])
def layer(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    if request.param == "cgroup" and not HAS_CGROUPS:
        pytest.skip("no cgroup hierarchy with pids and memory can be made here")
    monkeypatch.setattr(runlimits, "ENABLED", request.param == "cgroup")
    yield request.param


def _run(ws: Path, program: str, args: str, release: bool, **limits: int) -> tuple[str, str, int, Sampler]:
    """Run a program of adversarial/limits through run_shell with a Sampler beside it. The program holds
    its peak until the sampler has seen it (`release`), or, when the run is expected to be stopped while it
    holds it (the supervisor layer), until then."""
    shutil.copy(PROGRAMS / program, ws / program)
    before = host_state()
    cgroups = _our_cgroups()
    marker = ("forked.txt" if program == "fork_flood.py" else "held.txt") if release else None
    with Sampler(ws, namespaces=tiers.DEFAULT_POLICY in ("bwrap", "unshare"), release_after=marker) as sampler:
        res = run_confined(f"python3 -I {program} {args}", workspace=ws, timeout=20, **limits)
    assert not res.timed_out, res
    same_host_state(before, host_state())
    assert run_confined("echo alive", workspace=ws, timeout=10).stdout == "alive\n"
    assert _our_cgroups() <= cgroups  # the run's cgroups are gone (others may belong to sandboxes still open)
    return res.stdout, res.stderr, res.exit_code, sampler


def _our_cgroups() -> set[str]:
    prefix = f"{runlimits.PREFIX}{os.getpid()}-"
    return {os.path.join(base, name) for _, base in runlimits.hierarchies().values() for name in os.listdir(base)
            if name.startswith(prefix)}


def test_fork_flood_is_held_to_the_process_limit(layer: str, tier: str, tmp_path: Path) -> None:
    out, err, code, sampler = _run(tmp_path, "fork_flood.py", "300", release=layer == "cgroup", max_processes=48)
    if layer == "cgroup":
        assert "then BlockingIOError" in out, out + err
        assert int(out.split()[1]) < 48
        assert "refused" in err and "limit of 48 for the whole run" in err
        assert sampler.max_tasks <= 48, sampler.max_tasks
    else:
        # Sampled: the run may overshoot within one interval, then it is stopped as a whole while its
        # children are held (the program ends only when released).
        assert "stopped: the run had" in err and "(limit 48 for the whole run)" in err, out + err
        assert code == -9


def test_fork_flood_control_reaches_past_the_limit(tier: str, tmp_path: Path) -> None:
    # What the sampler sees when the limit is loose: the flood itself is real (root ignores RLIMIT_NPROC).
    out, _, _, sampler = _run(tmp_path, "fork_flood.py", "120", release=True, max_processes=1000)
    assert "forked 120 all" in out
    assert sampler.max_tasks > 100, sampler.max_tasks


def test_memory_spread_is_held_to_the_run_total(layer: str, tier: str, tmp_path: Path) -> None:
    # Each child may map 192 MiB (RLIMIT_AS) and touches 80; four of them would hold 320 MiB together.
    out, err, code, sampler = _run(tmp_path, "memory_spread.py", "4 80", release=layer == "cgroup", memory_mb=192)
    if layer == "cgroup":
        # Every child holds its block until all have one (or died): two fit in 192 MiB, so at least two of
        # the four are killed by the kernel and at most two end well.
        assert "killed when the run's processes together reached its 192 MiB memory limit" in err, out + err
        assert out.count("child status -9") >= 2 and out.count("child status 0") <= 2, out
        # The sampler never saw the run hold more than the limit, plus the slack of Pss against the cgroup's
        # charge (the launcher's own pages were charged before it joined).
        assert sampler.max_anon <= (192 + 32) * MiB, sampler.max_anon / MiB
    else:
        # The supervisor samples: all four children hold their 80 MiB together (none is released), and the
        # whole run is stopped at the next sample.
        assert "stopped: the run's processes held" in err and "(limit 192 MiB for the whole run)" in err, out + err
        assert code == -9
        assert "child status 0" not in out, out


def test_shared_memory_is_counted(layer: str, tier: str, tmp_path: Path) -> None:
    # Three processes each hold 100 MiB of anonymous shared memory against 192 MiB for the run: the cgroup
    # charges shared pages, the supervisor counts RssShmem (it used to count resident minus shared: such memory
    # was free).
    out, err, code, sampler = _run(tmp_path, "shared_memory.py", "3 100", release=layer == "cgroup", memory_mb=192)
    if layer == "supervisor":
        assert "stopped: the run's processes held" in err and "(limit 192 MiB for the whole run)" in err, out + err
        assert code == -9
    else:
        # two 100 MiB blocks do not fit in 192 MiB, and every child holds its block until all are done:
        # at least two of the three are killed
        assert "processes were killed when the run's processes together reached its 192 MiB" in err, out + err
        assert int(err.split("processes were killed")[0].split()[-1]) >= 2, err


def test_memory_spread_control_holds_all_of_it(tier: str, tmp_path: Path) -> None:
    out, _, _, sampler = _run(tmp_path, "memory_spread.py", "4 80", release=True, memory_mb=1024)
    assert out.count("holds 80 MiB") == 4
    assert sampler.max_anon > 300 * MiB, sampler.max_anon / MiB


@pytest.mark.skipif(not HAS_CGROUPS, reason="no cgroup hierarchy with pids and memory can be made here")
def test_worker_threads_are_held_to_max_tasks(tmp_path: Path) -> None:
    program = (
        "import threading, time\n"
        "n = 0\n"
        "try:\n"
        "    for _ in range(200):\n"
        "        threading.Thread(target=time.sleep, args=(3,), daemon=True).start()\n"
        "        n += 1\n"
        "except RuntimeError as e:\n"
        "    print('stopped at', n, e)\n"
    )
    cgroups = _our_cgroups()
    with Sandbox(tmp_path, SandboxLimits(timeout=10, max_tasks=16)) as sb:
        text = sb.run(program, [], lambda name, kwargs: None).text()
        assert sb.run("print('still here')", [], lambda name, kwargs: None).text() == "still here"
    assert text.startswith("stopped at "), text
    assert int(text.split()[2]) < 16
    assert _our_cgroups() <= cgroups


@pytest.mark.skipif(not HAS_CGROUPS, reason="no cgroup hierarchy with pids and memory can be made here")
def test_cgroups_left_by_a_dead_host_are_swept(monkeypatch: pytest.MonkeyPatch) -> None:
    dead = 2**22 + 1  # above pid_max's default ceiling on 64-bit: never a live process
    while True:
        try:
            os.kill(dead, 0)
            dead += 1
        except ProcessLookupError:
            break
    stale = [os.path.join(base, f"{runlimits.PREFIX}{dead}-0") for _, base in runlimits.hierarchies().values()]
    for d in stale:
        os.makedirs(d, exist_ok=True)
    monkeypatch.setattr(runlimits, "_swept", set())
    runlimits.create(max_tasks=8, memory_mb=64).close()
    assert [d for d in stale if os.path.exists(d)] == []


def test_hierarchies_are_found_from_mountinfo(tmp_path: Path) -> None:
    v1 = (
        "30 25 0:26 / /sys/fs/cgroup/pids rw,nosuid shared:9 - cgroup cgroup rw,pids\n"
        "31 25 0:27 /docker /sys/fs/cgroup/memory rw,nosuid shared:10 - cgroup cgroup rw,memory\n"
    )
    proc = "8:pids:/\n4:memory:/docker/abc\n0::/\n"
    found = runlimits.find_hierarchies(v1.replace("/sys/fs/cgroup", str(tmp_path)), proc)
    assert found == {}  # the directories do not exist under tmp_path yet
    (tmp_path / "pids").mkdir()
    (tmp_path / "memory" / "abc").mkdir(parents=True)
    found = runlimits.find_hierarchies(v1.replace("/sys/fs/cgroup", str(tmp_path)), proc)
    assert found == {"pids": (1, str(tmp_path / "pids")), "memory": (1, str(tmp_path / "memory" / "abc"))}
    v2 = f"40 25 0:30 / {tmp_path}/unified rw - cgroup2 cgroup2 rw\n"
    own = tmp_path / "unified" / "user.slice" / "app"
    own.mkdir(parents=True)
    (own / "cgroup.subtree_control").write_text("cpu memory\n")
    assert runlimits.find_hierarchies(v2, "0::/user.slice/app\n") == {}  # pids not delegated
    (own / "cgroup.subtree_control").write_text("cpu memory pids\n")
    assert runlimits.find_hierarchies(v2, "0::/user.slice/app\n") == {"pids": (2, str(own)), "memory": (2, str(own))}
