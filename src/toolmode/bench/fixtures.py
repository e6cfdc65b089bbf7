"""A tiny HTTP server on 127.0.0.1 that serves a task's pages for one episode."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FixtureServer:
    """Serve `{path: text}` over HTTP on a free local port; `.html` paths as HTML, `.json` as JSON."""

    def __init__(self, pages: dict[str, str]) -> None:
        self.pages = {"/" + p.lstrip("/"): text for p, text in pages.items()}
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> str:
        """Start serving; return the base URL (`http://127.0.0.1:PORT`)."""
        pages = self.pages

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                if path.endswith("/"):
                    path += "index.html"
                body = pages.get(path)
                if body is None:
                    self.send_error(404, "not found")
                    return
                kind = (
                    "text/html"
                    if path.endswith(".html")
                    else ("application/json" if path.endswith(".json") else "text/plain")
                )
                data = body.encode()
                self.send_response(200)
                self.send_header("Content-Type", f"{kind}; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self.base_url

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:PORT` of the running server."""
        if self._server is None:
            raise RuntimeError("fixture server not started")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def stop(self) -> None:
        """Stop serving and free the port."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FixtureServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
