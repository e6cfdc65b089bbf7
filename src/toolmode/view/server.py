"""The HTTP server of `toolmode view`: loopback only, GET and HEAD only, the folder's files only.

Everything a trace holds may have been written by the model, and the page is served to a browser that also
visits other sites, so:
- the socket binds 127.0.0.1; a request whose Host header is not `127.0.0.1:<port>` or `localhost:<port>`
  is refused (a DNS-rebinding page would send its own host name);
- only GET and HEAD are answered (anything else: 405); data and files are reached only through the routes
  below, with relative paths checked and opened beneath the folder (`folder`);
- a fetch that a browser marks as coming from another site (`Sec-Fetch-Site: cross-site` / `same-site`)
  gets nothing but the page itself;
- every answer carries a Content-Security-Policy that allows this origin's own script, style, images and
  fetches and nothing else (no inline script, no remote origin), `X-Content-Type-Options: nosniff`, no
  referrer, no framing, no caching;
- the page builds its DOM with textContent (static/app.js): trace text is never parsed as HTML.

Routes: `/` (the page), `/static/app.js`, `/static/app.css`, `/api/runs`, `/api/run?path=P`,
`/api/bench?path=P`, `/api/chart?path=P&name=N`.
"""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from toolmode.view.folder import BadPath, Folder, RunList

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cache-Control": "no-store",
}
STATIC = {  # path: (file in toolmode/view/static, content type)
    "/": ("index.html", "text/html; charset=utf-8"),
    "/index.html": ("index.html", "text/html; charset=utf-8"),
    "/static/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/static/app.css": ("app.css", "text/css; charset=utf-8"),
}
LOOPBACK = "127.0.0.1"


def _static(name: str) -> bytes:
    return resources.files("toolmode.view").joinpath("static", name).read_bytes()


class ViewServer(ThreadingHTTPServer):
    """Serves one folder on 127.0.0.1 (`port` 0: a free port chosen by the system)."""

    daemon_threads = True
    allow_reuse_address = True  # a restart may bind the port at once; a live listener still refuses it

    def __init__(self, folder: Folder, port: int = 0) -> None:
        super().__init__((LOOPBACK, port), ViewHandler)
        self.folder = folder
        self.runs = RunList(folder)
        self.port = int(self.server_address[1])
        self.allowed_hosts = {f"{LOOPBACK}:{self.port}", f"localhost:{self.port}"}
        self.static = {path: (_static(name), kind) for path, (name, kind) in STATIC.items()}

    @property
    def url(self) -> str:
        """The address to open."""
        return f"http://{LOOPBACK}:{self.port}/"


class ViewHandler(BaseHTTPRequestHandler):
    """One request: checked, routed, answered with the security headers."""

    server: ViewServer
    protocol_version = "HTTP/1.1"
    server_version = "toolmode-view"
    sys_version = ""

    def do_GET(self) -> None:  # noqa: N802 - the http.server naming
        """Answer a GET."""
        self._answer(body=True)

    def do_HEAD(self) -> None:  # noqa: N802
        """Answer a HEAD: the GET's status and headers, no body."""
        self._answer(body=False)

    def _not_allowed(self) -> None:
        self.close_connection = True  # a body may follow that is never read
        self._send(405, _json({"error": "only GET and HEAD are answered"}), "application/json",
                   body=True, extra={"Allow": "GET, HEAD"})

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_TRACE = do_CONNECT = _not_allowed  # noqa: N815

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        """Quiet: no line per request (errors are printed where they happen)."""

    def _answer(self, *, body: bool) -> None:
        host = self.headers.get("Host", "")
        if host not in self.server.allowed_hosts:
            self.close_connection = True
            self._error(403, f"refused: this server answers only to the Host 127.0.0.1:{self.server.port} or "
                             f"localhost:{self.server.port}", body)
            return
        parts = urlsplit(self.path)
        static = self.server.static.get(parts.path)
        site = self.headers.get("Sec-Fetch-Site", "none")
        if site not in ("same-origin", "none") and not (parts.path == "/" and self._navigation()):
            self._error(403, "refused: a request from another site", body)
            return
        if static is not None:
            self._send(200, static[0], static[1], body=body)
            return
        if parts.path == "/favicon.ico":  # asked for by every browser; there is none
            self._send(204, b"", "image/x-icon", body=body)
            return
        try:
            query = parse_qs(parts.query, keep_blank_values=True, strict_parsing=False, max_num_fields=8)
        except ValueError:
            self._error(400, "too many query fields", body)
            return
        self._api(parts.path, {k: v[0] for k, v in query.items()}, body)

    def _navigation(self) -> bool:
        return self.headers.get("Sec-Fetch-Mode") == "navigate" and self.headers.get("Sec-Fetch-Dest") == "document"

    def _api(self, path: str, query: dict[str, str], body: bool) -> None:
        from toolmode.view import benchpage

        try:
            if path == "/api/runs":
                self._send(200, _json(self.server.runs.listing()), "application/json", body=body)
            elif path == "/api/run":
                self._send(200, _json(self.server.runs.run(query.get("path", ""))), "application/json", body=body)
            elif path == "/api/bench":
                data = benchpage.bench_view(self.server.folder, query.get("path", ""))
                self._send(200, _json(data), "application/json", body=body)
            elif path == "/api/chart":
                png = benchpage.chart(self.server.folder, query.get("path", ""), query.get("name", ""))
                self._send(200, png, "image/png", body=body)
            else:
                self._error(404, "no such page", body)
        except BadPath as exc:
            self._error(400, str(exc), body)
        except FileNotFoundError:
            self._error(404, "no such file in this folder", body)
        except (PermissionError, NotADirectoryError, IsADirectoryError) as exc:
            self._error(403, _line(exc), body)
        except ValueError as exc:  # the bench's own "this file is not a bench record" errors
            self._error(422, _line(exc), body)
        except Exception as exc:  # noqa: BLE001 - one broken file must not stop the server
            print(f"toolmode view: {self.path[:200]!r}: {type(exc).__name__}: {_line(exc)}", file=sys.stderr)
            self._error(500, f"cannot show this: {_line(exc)}", body)

    def _error(self, status: int, message: str, body: bool) -> None:
        self._send(status, _json({"error": message}), "application/json", body=body)

    def _send(self, status: int, data: bytes, kind: str, *, body: bool, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        for name, value in {**SECURITY_HEADERS, **(extra or {})}.items():
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if body:
            self.wfile.write(data)


def _json(value: Any) -> bytes:
    """ASCII JSON (a browser's JSON.parse reads it; no raw control or format character crosses the wire)."""
    return json.dumps(value, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")


def _line(exc: BaseException) -> str:
    from toolmode.textsafe import escape_control

    if isinstance(exc, OSError) and exc.strerror:
        return escape_control(exc.strerror)
    return escape_control(" ".join(str(exc).split())[:500]) or type(exc).__name__
