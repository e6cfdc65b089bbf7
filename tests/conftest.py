"""Shared fixtures: a scripted model server factory, a workspace directory and a local HTTP page server."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from sandbox_tiers import tier  # noqa: F401 (a fixture: the sandbox tier a test runs on)
from toolmode.testing import ScriptedModelServer

PAGE_TITLE = "Toolmode Fixture Page"
PAGE_HTML = (
    f"<!doctype html><html><head><title>{PAGE_TITLE}</title></head>"
    "<body><h1>Hello from the fixture</h1><p>Local test page.</p></body></html>"
)


@pytest.fixture(scope="session", autouse=True)
def _state_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """toolmode's per-user state key (`hostkey`) lives in a temporary XDG_STATE_HOME, never in the real home."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state-home")))
        yield


@pytest.fixture
def scripted() -> Iterator[Callable[..., ScriptedModelServer]]:
    """Factory: `scripted(items, usage_style=...)` returns a started ScriptedModelServer, stopped at teardown."""
    servers: list[ScriptedModelServer] = []

    def make(script: Any, usage_style: str = "deepseek", **kwargs: Any) -> ScriptedModelServer:
        server = ScriptedModelServer(script, usage_style, **kwargs)  # type: ignore[arg-type]
        server.start()
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.stop()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty workspace directory."""
    path = tmp_path / "workspace"
    path.mkdir()
    return path


class _PageHandler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = PAGE_HTML.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def page_title() -> str:
    """The <title> of the page that `page_server` serves."""
    return PAGE_TITLE


@pytest.fixture
def page_server() -> Iterator[str]:
    """A local HTTP server on 127.0.0.1 serving an HTML page titled PAGE_TITLE; yields its URL."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _PageHandler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/page.html"
    finally:
        httpd.shutdown()
        httpd.server_close()
