"""A bench episode reaches its own fixture server and nothing else on the host's private network."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from toolmode.bench.fixtures import FixtureServer
from toolmode.bench.task import TaskEnv
from toolmode.bench.tasks.common import builtins
from toolmode.tools.netguard import NetworkRefused


class _HostOnly(BaseHTTPRequestHandler):
    """A service that listens on loopback for the host alone (an admin page, a local database's HTTP port)."""

    hits: list[str] = []

    def do_GET(self) -> None:
        _HostOnly.hits.append(self.path)
        body = b"host-only secret"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def host_service() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _HostOnly)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _HostOnly.hits = []
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _fetch(tmp_path: Path, base_url: str | None) -> Any:
    env = TaskEnv(workspace=tmp_path, seed=0, facts={}, base_url=base_url, mode="react")
    return next(t for t in builtins(env) if t.name == "fetch_url")


def test_the_fixture_server_is_reachable_and_no_other_local_service(tmp_path: Path, host_service: str) -> None:
    with FixtureServer({"index.html": "<title>fixture</title><p>ok</p>"}) as fixture:
        fetch = _fetch(tmp_path, fixture.base_url)
        assert fetch(url=f"{fixture.base_url}/index.html")["title"] == "fixture"
        assert fixture.base_url.removeprefix("http://") in fetch.description  # the model is told
        for url in (f"{host_service}/admin", host_service.replace("127.0.0.1", "localhost") + "/admin",
                    "http://169.254.169.254/latest/meta-data/", "http://10.0.0.1/"):
            with pytest.raises(NetworkRefused):
                fetch(url=url)
    assert _HostOnly.hits == []


def test_a_task_without_pages_reaches_no_local_service(tmp_path: Path, host_service: str) -> None:
    fetch = _fetch(tmp_path, None)
    with pytest.raises(NetworkRefused):
        fetch(url=f"{host_service}/admin")
    assert _HostOnly.hits == []


def test_a_redirect_from_the_fixture_to_a_local_service_is_refused(tmp_path: Path, host_service: str) -> None:
    """The fixture is trusted by host:port; where it redirects is checked like any other address."""

    class Redirect(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(302)
            self.send_header("Location", f"{host_service}/admin")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        fetch = _fetch(tmp_path, f"http://127.0.0.1:{server.server_address[1]}")
        with pytest.raises(NetworkRefused):
            fetch(url=f"http://127.0.0.1:{server.server_address[1]}/go")
    finally:
        server.shutdown()
        server.server_close()
    assert _HostOnly.hits == []
