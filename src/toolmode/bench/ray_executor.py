"""`--executor ray`: episodes as Ray tasks, each building its own workspace and sandbox on the node that runs it.

What crosses the wire is the episode spec (task source, task name, mode, run, seed, bench path, config) and
the result row; the host records rows as they come back (the runner keeps results and resume in one place).
Worker nodes must be able to import toolmode (the same environment as the host). An episode whose node dies
is retried by Ray on another node; if every retry fails it is not recorded and runs again on resume.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from toolmode.bench.episode import BenchConfig, run_episode
from toolmode.bench.modespec import parse_mode
from toolmode.bench.runner import Episode
from toolmode.bench.source import TaskSource
from toolmode.errors import ToolmodeError

RETRIES = 3  # Ray reruns an episode whose worker or node died this many times
CONNECT_TIMEOUT = 5.0
LOCAL_OBJECT_STORE = 256 * 1024 * 1024  # a local cluster started here moves result rows only


class ExecutorError(ToolmodeError, RuntimeError):
    """The executor cannot start (Ray missing, or no cluster at the address): one line for the user."""


def run_remote(spec: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The Ray task: load the tasks on this node (once per worker process), run one episode.

    Returns the result row and the id of the node that ran it.
    """
    import ray

    source: TaskSource = spec["source"]
    task = next((t for t in source.load() if t.name == spec["task"]), None)
    if task is None:
        raise LookupError(f"task {spec['task']!r} is not in {source} on this node")
    record = run_episode(
        task, parse_mode(spec["mode"]), spec["run"], spec["seed"], Path(spec["bench_dir"]), spec["config"]
    )
    return record, ray.get_runtime_context().get_node_id()


def require_ray() -> Any:
    """The `ray` module, or ExecutorError saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ExecutorError(
            "--executor ray needs Ray: pip install 'ray[default]' (in a toolmode checkout: pip install -e '.[ray]')"
        ) from None
    return ray


def check_address(address: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """ExecutorError unless something accepts TCP connections at `address` (`host:port` or `ray://host:port`)."""
    if address == "auto":
        return
    parts = urlsplit(address if "://" in address else f"tcp://{address}")
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        host, port = None, None
    if not host or not port:
        raise ExecutorError(f"bad Ray address {address!r}: expected host:port (or ray://host:port)")
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as exc:
        raise ExecutorError(f"no Ray cluster answers at {address} ({exc.strerror or exc})") from None


class RayExecutor:
    """Runs episodes as Ray tasks on a cluster (`address`) or on a local Ray started for this bench."""

    def __init__(
        self, bench_dir: Path, config: BenchConfig, source: TaskSource, address: str | None = None
    ) -> None:
        ray = require_ray()
        address = (
            address or os.environ.get("RAY_ADDRESS") or None
        )  # Ray's own variable, as `ray.init` reads it
        if address:
            check_address(address)
        self.ray = ray
        self.bench_dir, self.config, self.source = Path(bench_dir).resolve(), config, source
        self.lost = 0
        self.errors: list[str] = []
        self.nodes: Counter[str] = Counter()  # episodes that came back, by the id of the node that ran them
        self._pending: dict[Any, Callable[[dict[str, Any] | None], None]] = {}
        self._cond = threading.Condition()
        self._closed = False
        options: dict[str, Any] = {"log_to_driver": False, "logging_level": "ERROR"}
        if not address:  # a local Ray for this bench: small, no dashboard
            options.update(object_store_memory=LOCAL_OBJECT_STORE, include_dashboard=False)
        try:
            self._owns = not ray.is_initialized()
            if self._owns:
                ray.init(address=address or None, **options)
        except Exception as exc:  # noqa: BLE001 - any failure to join the cluster is one line for the user
            raise ExecutorError(f"cannot connect to Ray at {address or 'a local cluster'}: {exc}") from None
        self._remote = ray.remote(num_cpus=1, max_retries=RETRIES)(run_remote)
        self._collector = threading.Thread(target=self._collect, daemon=True, name="ray-results")
        self._collector.start()

    def start(self, index: int, e: Episode, done: Callable[[dict[str, Any] | None], None]) -> None:
        """Submit `e` as a Ray task; `done(row)` is called from the collector thread when it comes back."""
        spec = {
            "source": self.source,
            "task": e.task.name,
            "mode": e.spec.label,
            "run": e.run,
            "seed": e.seed,
            "bench_dir": str(self.bench_dir),
            "config": self.config,
        }
        ref = self._remote.remote(spec)
        with self._cond:
            self._pending[ref] = done
            self._cond.notify()

    def _collect(self) -> None:
        ray = self.ray
        while True:
            with self._cond:
                while not self._pending and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                refs = list(self._pending)
            ready, _ = ray.wait(refs, num_returns=1, timeout=0.5)
            if ready:
                ready, _ = ray.wait(refs, num_returns=len(refs), timeout=0)
            for ref in ready:
                with self._cond:
                    done = self._pending.pop(ref, None)
                if done is None:
                    continue
                try:
                    record, node = ray.get(ref)
                    self.nodes[node] += 1
                except Exception as exc:  # noqa: BLE001 - the episode's node died after every retry
                    record = None
                    self.lost += 1
                    self.errors.append(f"{type(exc).__name__}: {str(exc)[:200]}")
                done(record)

    def summary(self) -> str:
        """One line: how many episodes each node ran."""
        per_node = ", ".join(f"{node[:8]}: {n}" for node, n in self.nodes.most_common())
        total = sum(self.nodes.values())
        return f"ray: {total} episodes came back from {len(self.nodes)} node(s) ({per_node or 'none'})"

    def abandon(self) -> None:
        """Cancel the running episodes (their worker processes are stopped); their rows are not kept."""
        with self._cond:
            refs = list(self._pending)
        for ref in refs:
            with contextlib.suppress(Exception):
                self.ray.cancel(ref, force=True)

    def close(self) -> None:
        """Stop collecting; disconnect from (or shut down the local) Ray. Ctrl-C is ignored meanwhile:
        an interrupted shutdown would leave a local Ray's processes behind."""
        main = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
        try:
            with self._cond:
                self._closed = True
                self._cond.notify_all()
            self._collector.join(2.0)
            if self._owns:
                with contextlib.suppress(Exception):
                    self.ray.shutdown()
        finally:
            if main:
                signal.signal(signal.SIGINT, previous)
