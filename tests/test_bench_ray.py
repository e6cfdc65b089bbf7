"""`toolmode bench --executor ray` against a local Ray cluster started here: a head and one extra node.

Both nodes are `ray start --block` processes on this machine (1 CPU each, small object stores), each in its
own process group so a node can be killed whole. Ray binds the machine's own address (a multi-node Ray refuses
loopback-only); nothing leaves the machine. The bench runs as a CLI subprocess with scripted players.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ray")

REPO = Path(__file__).resolve().parents[1]
TIMING = {"started_at", "wall_time", "model_time", "episode_time", "server_time"}
TASKS, MODES = "log_stats,write_report", "react,code,hybrid"
STARTUP_SECONDS = 120
TOKEN = secrets.token_hex(32)  # this test's cluster only


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO / "src"), env.get("PYTHONPATH")) if p)
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    env["RAY_AUTH_MODE"] = (
        "token"  # the nodes listen on the machine's address: only holders of the token join
    )
    env["RAY_AUTH_TOKEN"] = TOKEN
    env.pop("RAY_ADDRESS", None)
    return env


@dataclass
class Cluster:
    """A head and worker nodes started by the test; `address` is the head's GCS address."""

    root: Path
    address: str = ""
    nodes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def start_node(self, name: str, head: bool) -> subprocess.Popen[bytes]:
        """Start one node (`ray start --block`) in its own process group; wait until it reports ready."""
        ports = ["--node-manager-port", "--object-manager-port", "--metrics-export-port",
                 "--dashboard-agent-listen-port", "--dashboard-agent-grpc-port", "--runtime-env-agent-port"]  # fmt: skip
        argv = [sys.executable, "-m", "ray.scripts.scripts", "start", "--block", "--num-cpus", "1",
                "--object-store-memory", str(100 * 1024 * 1024), "--disable-usage-stats"]  # fmt: skip
        for flag in ports:
            argv += [flag, str(_free_port())]
        if head:
            port = _free_port()
            self.address = f"127.0.0.1:{port}"
            argv += ["--head", "--port", str(port), "--include-dashboard", "false", "--temp-dir", str(self.root),
                     "--dashboard-port", str(_free_port()), "--ray-client-server-port", str(_free_port())]  # fmt: skip
        else:
            argv += ["--address", self.address]
        log = self.root / f"{name}.log"
        proc = subprocess.Popen(argv, stdout=log.open("wb"), stderr=subprocess.STDOUT, env=_env(),
                                start_new_session=True)  # fmt: skip
        self.nodes.append(proc)
        deadline = time.monotonic() + STARTUP_SECONDS
        while "Ray runtime started" not in log.read_text(errors="replace"):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"ray node {name} did not start:\n{log.read_text(errors='replace')[-3000:]}"
                )
            time.sleep(0.3)
        return proc

    def kill(self, proc: subprocess.Popen[bytes]) -> None:
        """Kill a node at once, every process of it (its process group), as a crashed machine would."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)

    def stop(self) -> None:
        """Stop every node: SIGTERM to its `ray start` (Ray's clean stop), then SIGKILL its process group."""
        for proc in self.nodes:
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()
        deadline = time.monotonic() + 20
        for proc in self.nodes:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(max(0.1, deadline - time.monotonic()))
        for proc in self.nodes:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # also children that outlived their node's stop
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """A head plus one extra node on this machine, torn down even when a test fails."""
    # A short path: Ray's unix sockets live under it (108-byte limit).
    c = Cluster(Path(tempfile.mkdtemp(prefix="tmray", dir="/tmp")))
    try:
        c.start_node("head", head=True)
        c.start_node("worker", head=False)
        yield c
    finally:
        c.stop()
        shutil.rmtree(c.root, ignore_errors=True)


def _bench_argv(out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "toolmode", "bench", "--scripted", "--tasks", TASKS, "--modes", MODES,
            "--out", str(out), "--no-progress", "--no-charts", "--jobs", "2", *extra]  # fmt: skip


def _bench(out: Path, *extra: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(_bench_argv(out, *extra), capture_output=True, text=True, env=_env(), timeout=timeout,
                          cwd=REPO)  # fmt: skip


def _rows(bench: Path) -> dict[tuple[str, str, int], dict[str, Any]]:
    """The records by episode, without the wall-clock fields (they differ run to run).

    A trace file is named after the time it was written, so only its folder (the episode's) is compared.
    """
    rows = {}
    for line in (bench / "results.jsonl").read_text().splitlines():
        r = json.loads(line)
        r["trace"] = str(Path(r["trace"]).parent)
        rows[(r["task"], r["mode"], r["run"])] = {k: v for k, v in r.items() if k not in TIMING}
    return rows


@pytest.fixture(scope="module")
def local_rows(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str, int], dict[str, Any]]:
    """The same bench with --executor local --jobs 2: what every Ray run must reproduce."""
    out = tmp_path_factory.mktemp("local") / "bench"
    done = _bench(out, "--runs", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    rows = _rows(out)
    assert len(rows) == 2 * 3 * 2 and all(r["ok"] for r in rows.values())
    return rows


def test_a_ray_run_matches_the_local_run_exactly(cluster: Cluster, local_rows: Any, tmp_path: Path) -> None:
    out = tmp_path / "bench"
    done = _bench(out, "--runs", "2", "--executor", "ray", "--ray-address", cluster.address)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _rows(out) == local_rows
    # Both nodes ran episodes (each building its own workspace and sandbox there).
    line = next(x for x in done.stdout.splitlines() if x.startswith("ray: "))
    assert "12 episodes came back from 2 node(s)" in line, line
    record = next(r for r in _rows(out).values() if r["task"] == "write_report" and r["mode"] == "code")
    assert (
        out / "episodes" / "write_report" / "code" / f"run-{record['run']}" / "workspace" / "report.csv"
    ).is_file()


def _read_until(proc: subprocess.Popen[str], marker: str) -> str:
    """The process's output up to the line holding `marker` (or to its end)."""
    assert proc.stdout is not None
    read = ""
    for line in proc.stdout:
        read += line
        if marker in line:
            break
    return read


def _interrupted(argv: list[str], results: Path, after: int, interrupts: int) -> tuple[int, str]:
    """Start a bench, wait until `results` has `after` more rows, send Ctrl-C `interrupts` times."""
    start = len(results.read_text().splitlines()) if results.is_file() else 0
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=_env(), cwd=REPO
    )
    try:
        deadline = time.monotonic() + 180
        while not (results.is_file() and len(results.read_text().splitlines()) >= start + after):
            assert proc.poll() is None and time.monotonic() < deadline, (
                proc.stdout.read() if proc.stdout else ""
            )
            time.sleep(0.1)
        taken = ""
        for i in range(interrupts):
            if i:  # the next Ctrl-C once the bench has taken the last one (it says so), or has ended
                taken += _read_until(proc, "(Ctrl-C again to abandon them)")
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        output = taken + proc.communicate(timeout=120)[0]
    finally:
        if proc.poll() is None:
            proc.kill()
    # Exit 130, or ended by the SIGINT itself (Ray's driver teardown at interpreter exit sometimes re-raises it
    # after the bench has printed its resume line): a shell shows both as $? = 130.
    return (130 if proc.returncode == -signal.SIGINT else proc.returncode), output


def test_ctrl_c_then_resume_on_ray_matches_local(cluster: Cluster, local_rows: Any, tmp_path: Path) -> None:
    """One Ctrl-C waits for the running episodes; on resume a second one cancels them; a last resume completes."""
    out = tmp_path / "bench"
    ray = ["--executor", "ray", "--ray-address", cluster.address]
    code, output = _interrupted(_bench_argv(out, "--runs", "2", *ray), out / "results.jsonl", 2, 1)
    assert code == 130 and "interrupted." in output and "resume with: toolmode bench --resume" in output, (
        output
    )
    first = _rows(out)
    assert 2 <= len(first) < len(local_rows), output
    resume = [sys.executable, "-m", "toolmode", "bench", "--resume", str(out), "--no-progress", "--no-charts",
              "--jobs", "2", *ray]  # fmt: skip
    code, output = _interrupted(resume, out / "results.jsonl", 1, 2)
    assert code == 130, output
    # The second Ctrl-C abandons what still runs (unless it finished in between).
    assert "abandoned" in output or "interrupted." in output, output
    second = _rows(out)
    assert len(first) < len(second) < len(local_rows), output
    assert all(local_rows[key] == row for key, row in second.items())
    done = subprocess.run(resume, capture_output=True, text=True, env=_env(), timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _rows(out) == local_rows


def test_killing_a_worker_node_mid_run_loses_no_finished_episode(
    cluster: Cluster, local_rows: Any, tmp_path: Path
) -> None:
    # Which node runs the first episodes is Ray's choice (a new node's worker process may still be starting):
    # a run whose extra node had returned no episode when it was killed exercised nothing on it, so such a run
    # is repeated with a new extra node, at most 3 times. Every run must lose nothing.
    outputs = []
    for attempt in range(3):
        worker = cluster.nodes[1] if attempt == 0 else cluster.start_node(f"worker-{attempt}", head=False)
        out = tmp_path / f"bench-{attempt}"
        output, before = _bench_and_kill(cluster, worker, out)
        after = (out / "results.jsonl").read_text().splitlines()
        assert after[: len(before)] == before  # nothing finished before the kill was lost or rewritten
        assert _rows(out) == local_rows  # and the episodes that were running on the dead node ran again elsewhere
        outputs.append(output)
        if "ray: 12 episodes came back from 2 node(s)" in output:
            return
    pytest.fail("the extra node never returned an episode before it was killed:\n" + "\n".join(outputs))


def _bench_and_kill(cluster: Cluster, worker: subprocess.Popen[bytes], out: Path) -> tuple[str, list[str]]:
    """Run a Ray bench, kill `worker` once 4 episodes are recorded; its output and the rows before the kill."""
    proc = subprocess.Popen(_bench_argv(out, "--runs", "2", "--executor", "ray", "--ray-address", cluster.address),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=_env(), cwd=REPO)  # fmt: skip
    try:
        results = out / "results.jsonl"
        deadline = time.monotonic() + 180
        while not (results.is_file() and len(results.read_text().splitlines()) >= 4):
            assert proc.poll() is None and time.monotonic() < deadline, (
                proc.stdout.read() if proc.stdout else ""
            )
            time.sleep(0.1)
        before = results.read_text().splitlines()
        cluster.kill(worker)
        output, _ = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, output
    return output, before


def test_a_ray_address_that_does_not_answer_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from toolmode.bench.cli import bench_main

    address = f"127.0.0.1:{_free_port()}"
    code = bench_main(
        ["--scripted", "--executor", "ray", "--ray-address", address, "--out", str(tmp_path / "b")]
    )
    assert code == 2
    captured = capsys.readouterr()
    lines = [x for x in captured.err.splitlines() if x.strip()]
    assert lines == [f"toolmode bench: error: no Ray cluster answers at {address} (Connection refused)"], captured.err
    assert not (tmp_path / "b").exists()


def test_ray_options_without_ray_executor_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from toolmode.bench.cli import bench_main

    assert bench_main(["--scripted", "--ray-address", "127.0.0.1:1", "--out", str(tmp_path / "b")]) == 2
    assert capsys.readouterr().err.strip() == "toolmode bench: error: --ray-address needs --executor ray"
    assert bench_main(["--scripted", "--executor", "dask", "--out", str(tmp_path / "b")]) == 2
    assert capsys.readouterr().err.strip() == "toolmode bench: error: unknown executor 'dask'; known: local, ray"
