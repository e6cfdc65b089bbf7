"""Builtin tools against real files, a real local HTTP server and the real shell sandbox."""

from __future__ import annotations

import contextlib
import ipaddress
import os
import socket
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from toolmode.tools import builtin, netguard, safe_open
from toolmode.tools.base import Tool
from toolmode.tools.builtin import builtin_tool_names, builtin_tools
from toolmode.tools.html_text import html_to_text
from toolmode.tools.workspace import Workspace


def tools_by_name(workspace: Path, **options: Any) -> dict[str, Tool]:
    return {t.name: t for t in builtin_tools(workspace, **options)}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def tools(ws: Path) -> dict[str, Tool]:
    return tools_by_name(ws)


# ---------------------------------------------------------------- the set of tools


def test_names_signatures_and_source(ws):
    tools = builtin_tools(ws)
    assert [t.name for t in tools] == builtin_tool_names()
    assert {t.source for t in tools} == {"builtin"}
    signatures = {t.name: t.signature() for t in tools}
    assert signatures == {
        "list_dir": "list_dir(path: str = '.') -> list[dict]",
        "read_file": "read_file(path: str, start_line: int = 1, max_lines: int | None = None) -> str",
        "write_file": "write_file(path: str, content: str, append: bool = False) -> str",
        "run_shell": "run_shell(command: str, timeout: float | None = None) -> dict",
        "fetch_url": "fetch_url(url: str, max_chars: int = 20000) -> dict",
        "current_time": "current_time(timezone: str = 'UTC') -> dict",
        "calculator": "calculator(expression: str) -> float | int",
    }
    for t in tools:
        assert "Returns:" in t.description, t.name
        assert all(p.get("description") for p in t.parameters["properties"].values()), t.name


def test_docstrings_state_the_configured_limits(ws):
    tools = tools_by_name(ws, shell_timeout=7, fetch_timeout=3, fetch_max_bytes=1234)
    assert (
        "default and maximum: 7"
        in tools["run_shell"].schema()["function"]["parameters"]["properties"]["timeout"]["description"]
    )
    assert "3 seconds" in tools["fetch_url"].description
    assert "1234 bytes" in tools["fetch_url"].description
    assert "Only public internet addresses" in tools["fetch_url"].description


def test_workspace_must_exist(tmp_path):
    with pytest.raises(NotADirectoryError):
        builtin_tools(tmp_path / "missing")


# ---------------------------------------------------------------- workspace confinement


def test_workspace_resolves_relative_and_inside_absolute_paths(ws):
    workspace = Workspace(ws)
    assert workspace.resolve("a/b.txt") == ws.resolve() / "a" / "b.txt"
    assert workspace.resolve(ws / "c.txt") == ws.resolve() / "c.txt"
    assert workspace.resolve("sub/../d.txt") == ws.resolve() / "d.txt"
    assert workspace.resolve(".") == ws.resolve()


@pytest.mark.parametrize("path", ["../x", "a/../../x", "/etc/passwd", "~/x", "~nosuchuser123/../../x"])
def test_workspace_refuses_escapes(ws, path):
    with pytest.raises(
        PermissionError, match=f"refused: '{path}' resolves outside the workspace {ws.resolve()}"
    ):
        Workspace(ws).resolve(path)


def test_workspace_refuses_symlinks_pointing_out(ws, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    (ws / "link_dir").symlink_to(outside)
    (ws / "link_file").symlink_to(outside / "secret.txt")
    (ws / "dangling").symlink_to(outside / "not-yet.txt")
    workspace = Workspace(ws)
    for path in ["link_dir", "link_dir/secret.txt", "link_file", "dangling", "link_dir/new/file.txt"]:
        with pytest.raises(PermissionError, match="resolves outside the workspace"):
            workspace.resolve(path)


def test_workspace_allows_symlinks_inside(ws):
    (ws / "real").mkdir()
    (ws / "alias").symlink_to(ws / "real")
    assert Workspace(ws).resolve("alias/f.txt") == ws.resolve() / "real" / "f.txt"


def test_file_tools_refuse_escapes(tools, ws, tmp_path):
    (tmp_path / "outside.txt").write_text("secret")
    (ws / "out").symlink_to(tmp_path)
    for call in (
        lambda: tools["read_file"](path="../outside.txt"),
        lambda: tools["read_file"](path=str(tmp_path / "outside.txt")),
        lambda: tools["read_file"](path="out/outside.txt"),
        lambda: tools["write_file"](path="../evil.txt", content="x"),
        lambda: tools["write_file"](path="out/evil.txt", content="x"),
        lambda: tools["list_dir"](path=".."),
        lambda: tools["list_dir"](path="out"),
    ):
        with pytest.raises(PermissionError, match="resolves outside the workspace"):
            call()
    assert not (tmp_path / "evil.txt").exists()


# ---------------------------------------------------------------- file tools


def test_write_then_read(tools, ws):
    assert (
        tools["write_file"](path="notes/a.txt", content="héllo\nworld\n") == "wrote 13 bytes to notes/a.txt"
    )
    assert (ws / "notes" / "a.txt").read_text(encoding="utf-8") == "héllo\nworld\n"
    assert tools["write_file"](path="notes/a.txt", content="more\n", append=True) == (
        "appended 5 bytes to notes/a.txt"
    )
    assert tools["read_file"](path="notes/a.txt") == "héllo\nworld\nmore\n"
    assert tools["write_file"](path="notes/a.txt", content="new") == "wrote 3 bytes to notes/a.txt"
    assert tools["read_file"](path="notes/a.txt") == "new"


def test_read_file_line_window(tools, ws):
    (ws / "lines.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    assert tools["read_file"](path="lines.txt", start_line=3, max_lines=2) == "line 3\nline 4\n"
    assert tools["read_file"](path="lines.txt", start_line=10) == "line 10\n"
    with pytest.raises(ValueError, match="past the end"):
        tools["read_file"](path="lines.txt", start_line=11)
    with pytest.raises(ValueError, match="start_line must be 1 or more"):
        tools["read_file"](path="lines.txt", start_line=0)
    with pytest.raises(ValueError, match="max_lines must be 1 or more"):
        tools["read_file"](path="lines.txt", max_lines=0)


def test_read_file_keeps_line_endings_and_replaces_bad_bytes(tools, ws):
    (ws / "crlf.txt").write_bytes(b"a\r\nb\r\n")
    assert tools["read_file"](path="crlf.txt") == "a\r\nb\r\n"
    (ws / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    assert tools["read_file"](path="latin1.txt") == "caf\ufffd\n"
    (ws / "empty.txt").write_text("")
    assert tools["read_file"](path="empty.txt") == ""


def test_read_file_stops_at_the_character_limit(tools, ws, monkeypatch):
    monkeypatch.setattr(builtin, "READ_MAX_CHARS", 25)
    (ws / "long.txt").write_text("0123456789\n" * 5 + "x" * 100)
    text = tools["read_file"](path="long.txt")
    assert text.startswith("0123456789\n0123456789\n012")
    assert "stopped at 25 characters, in line 3" in text


def test_read_file_errors(tools, ws):
    (ws / "dir").mkdir()
    (ws / "blob.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    with pytest.raises(FileNotFoundError, match="no such file: 'nope.txt'"):
        tools["read_file"](path="nope.txt")
    with pytest.raises(IsADirectoryError, match="'dir' is a directory"):
        tools["read_file"](path="dir")
    with pytest.raises(ValueError, match="looks like a binary file"):
        tools["read_file"](path="blob.bin")


def test_write_file_into_a_directory_is_refused(tools, ws):
    (ws / "dir").mkdir()
    with pytest.raises(IsADirectoryError):
        tools["write_file"](path="dir", content="x")


def test_list_dir(tools, ws, tmp_path):
    (ws / "b.txt").write_text("12345")
    (ws / "a_dir").mkdir()
    (ws / "a_dir" / "inner.txt").write_text("x")
    (ws / "c_link").symlink_to(tmp_path)  # listing a link that points out is fine; following it is not
    assert tools["list_dir"]() == [
        {"name": "a_dir", "type": "dir", "size": None},
        {"name": "b.txt", "type": "file", "size": 5},
        {"name": "c_link", "type": "symlink", "size": None},
    ]
    assert tools["list_dir"](path="a_dir") == [{"name": "inner.txt", "type": "file", "size": 1}]
    with pytest.raises(FileNotFoundError):
        tools["list_dir"](path="missing")
    with pytest.raises(NotADirectoryError):
        tools["list_dir"](path="b.txt")


@pytest.mark.parametrize("walk", [False, True], ids=["default", "fallback_walk"])
def test_file_tools_follow_symlinks_inside_the_workspace(ws, monkeypatch, walk):
    if walk:
        monkeypatch.setattr(safe_open, "USE_OPENAT2", False)
    tools = tools_by_name(ws)
    (ws / "real").mkdir()
    (ws / "alias").symlink_to(ws / "real")  # absolute target, inside
    (ws / "note").symlink_to("real/f.txt")  # relative target, inside, not there yet
    assert tools["write_file"](path="alias/f.txt", content="a") == "wrote 1 bytes to real/f.txt"
    assert tools["write_file"](path="note", content="b", append=True) == "appended 1 bytes to real/f.txt"
    assert tools["read_file"](path="note") == "ab"
    assert tools["list_dir"](path="alias") == [{"name": "f.txt", "type": "file", "size": 2}]
    assert tools["write_file"](path="alias/new/deep.txt", content="c") == "wrote 1 bytes to real/new/deep.txt"


def test_file_tools_behave_the_same_with_the_fallback_walk(tmp_path, monkeypatch):
    """The per-component walk used where openat2 is missing passes the file-tool tests above."""
    monkeypatch.setattr(safe_open, "USE_OPENAT2", False)
    checks = [
        test_file_tools_refuse_escapes,
        test_write_then_read,
        test_read_file_line_window,
        test_read_file_keeps_line_endings_and_replaces_bad_bytes,
        test_read_file_errors,
        test_write_file_into_a_directory_is_refused,
        test_list_dir,
    ]
    for number, check in enumerate(checks):
        base = tmp_path / str(number)
        (base / "ws").mkdir(parents=True)
        fixtures = {"tools": tools_by_name(base / "ws"), "ws": base / "ws", "tmp_path": base}
        check(**{name: fixtures[name] for name in check.__code__.co_varnames[: check.__code__.co_argcount]})


# ---------------------------------------------------------------- current_time


@pytest.fixture
def fixed_now(monkeypatch):
    # 2024-03-10 is a Sunday; New York switched to daylight saving time at 07:00 UTC that day.
    monkeypatch.setattr(builtin, "_now", lambda: datetime(2024, 3, 10, 12, 0, 5, 123456, tzinfo=UTC))


def test_current_time_fixed_zone(tools, fixed_now):
    assert tools["current_time"](timezone="Asia/Shanghai") == {
        "timezone": "Asia/Shanghai",
        "iso": "2024-03-10T20:00:05+08:00",
        "date": "2024-03-10",
        "time": "20:00:05",
        "weekday": "Sunday",
        "utc_offset": "+08:00",
    }
    assert tools["current_time"]()["iso"] == "2024-03-10T12:00:05+00:00"


@pytest.mark.parametrize(
    ("name", "zone", "clock", "offset"),
    [
        ("Beijing", "Asia/Shanghai", "20:00:05", "+08:00"),
        ("北京", "Asia/Shanghai", "20:00:05", "+08:00"),
        ("Tokyo", "Asia/Tokyo", "21:00:05", "+09:00"),
        ("东京", "Asia/Tokyo", "21:00:05", "+09:00"),
        ("New York", "America/New_York", "08:00:05", "-04:00"),
        ("纽约", "America/New_York", "08:00:05", "-04:00"),
        ("London", "Europe/London", "12:00:05", "+00:00"),
        ("伦敦", "Europe/London", "12:00:05", "+00:00"),
        ("america/los_angeles", "America/Los_Angeles", "05:00:05", "-07:00"),
        ("Berlin", "Europe/Berlin", "13:00:05", "+01:00"),
        ("UTC+8", "UTC+08:00", "20:00:05", "+08:00"),
        ("GMT-5", "UTC-05:00", "07:00:05", "-05:00"),
        ("+05:30", "UTC+05:30", "17:30:05", "+05:30"),
    ],
)
def test_current_time_aliases(tools, fixed_now, name, zone, clock, offset):
    result = tools["current_time"](timezone=name)
    assert (result["timezone"], result["time"], result["utc_offset"]) == (zone, clock, offset)


def test_current_time_unknown_zone(tools):
    with pytest.raises(ValueError, match="unknown timezone 'Mars/Olympus'.*'Asia/Shanghai'"):
        tools["current_time"](timezone="Mars/Olympus")
    with pytest.raises(ValueError, match="Did you mean 'Asia/Shanghai'"):
        tools["current_time"](timezone="Asia/Shangai")
    with pytest.raises(ValueError, match="invalid UTC offset"):
        tools["current_time"](timezone="UTC+20")


def test_calculator_is_a_builtin_tool(tools):
    assert tools["calculator"](expression="2 + 3 * 4") == 14
    with pytest.raises(ValueError, match="not allowed"):
        tools["calculator"](expression="__import__('os')")


# ---------------------------------------------------------------- run_shell (the real sandbox)


def test_run_shell_echo(tools):
    assert tools["run_shell"](command="echo hello") == {
        "exit_code": 0,
        "stdout": "hello\n",
        "stderr": "",
        "timed_out": False,
    }


def test_run_shell_runs_in_the_workspace(tools, ws):
    (ws / "data.txt").write_text("a\nb\n")
    result = tools["run_shell"](command="wc -l data.txt && echo made > out.txt")
    assert result["exit_code"] == 0 and "2 data.txt" in result["stdout"]
    assert (ws / "out.txt").read_text() == "made\n"


def test_run_shell_nonzero_exit(tools):
    result = tools["run_shell"](command="echo oops >&2; exit 3")
    assert result["exit_code"] == 3
    assert result["stderr"] == "oops\n"
    assert result["timed_out"] is False


def test_run_shell_timeout(tools):
    result = tools["run_shell"](command="echo started; sleep 30", timeout=0.5)
    assert result["timed_out"] is True
    assert result["stdout"] == "started\n"


def test_run_shell_timeout_is_capped_by_the_configured_maximum(ws):
    tools = tools_by_name(ws, shell_timeout=0.5)
    assert tools["run_shell"](command="sleep 30", timeout=1000)["timed_out"] is True


def test_run_shell_cannot_write_outside_the_workspace(tools, tmp_path):
    target = tmp_path / "escaped.txt"
    tools["run_shell"](command=f"echo x > {target}")  # refused, or (namespaces tier) written to its own /tmp
    assert not target.exists()


def test_run_shell_environment_has_no_api_key(tools, monkeypatch):
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-fake-test-key-123")
    result = tools["run_shell"](command="env")
    assert result["exit_code"] == 0
    assert "sk-fake-test-key-123" not in result["stdout"]
    assert "DEEPSEEK_API_KEY" not in result["stdout"]


def test_run_shell_bad_input(tools):
    with pytest.raises(ValueError, match="empty"):
        tools["run_shell"](command="   ")
    with pytest.raises(ValueError, match="positive"):
        tools["run_shell"](command="true", timeout=0)


# ---------------------------------------------------------------- fetch_url against a local server

PAGE = b"""<!doctype html><html><head><title>Fixture  Page</title>
<style>p { color: red }</style><script>document.write("hidden script text")</script></head>
<body><h1>Welcome</h1><p>Read the <a href="/docs">documentation here</a> today.</p>
<ul><li>first</li><li>second</li></ul></body></html>"""


class _Handler(BaseHTTPRequestHandler):
    release: threading.Event

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        path = url.path
        if path == "/page":
            self._send(200, "text/html; charset=utf-8", PAGE)
        elif path == "/host":
            self._send(200, "text/plain", (self.headers.get("Host") or "").encode())
        elif path == "/redirect":
            self._redirect("/page")
        elif path.startswith("/chain/"):
            left = int(path.rsplit("/", 1)[1])
            self._redirect(f"/chain/{left - 1}") if left else self._send(200, "text/plain", b"end of chain")
        elif path == "/to":
            self._redirect(query["target"])
        elif path == "/big":
            self._send(200, "text/plain", b"x" * 200_000)
        elif path == "/binary":
            self._send(200, "image/png", b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
        elif path == "/untyped-binary":
            self._send(200, None, b"\x00\x01\x02\x03" * 100)
        elif path == "/json":
            self._send(200, "application/json", b'{"answer": 42}')
        elif path == "/latin1":
            self._send(
                200, "text/html; charset=iso-8859-1", "<title>Café</title><p>déjà vu</p>".encode("latin-1")
            )
        elif path == "/missing":
            self._send(404, "text/html", b"<html><title>Not here</title><p>No such page.</p></html>")
        elif path == "/slow":
            self.release.wait(10)
            self._send(200, "text/plain", b"late")
        else:
            self._send(500, "text/plain", b"unexpected path")

    def _redirect(self, location: str) -> None:
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _send(self, status: int, content_type: str | None, body: bytes) -> None:
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(ConnectionError):  # the client may stop reading at its size cap
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    """A local HTTP server on 127.0.0.1; yields its base URL."""
    release = threading.Event()
    handler = type("Handler", (_Handler,), {"release": release})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        release.set()
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def connections(monkeypatch) -> list[tuple[str, int]]:
    """Every address fetch_url opens a TCP connection to; anything but loopback fails without connecting."""
    seen: list[tuple[str, int]] = []
    real = socket.create_connection

    def spy(address: tuple[str, int], *args: Any, **kwargs: Any) -> socket.socket:
        seen.append(address)
        if not ipaddress.ip_address(address[0]).is_loopback:
            raise ConnectionRefusedError(f"test guard: no traffic to {address[0]}")
        return real(address, *args, **kwargs)

    monkeypatch.setattr(netguard.socket, "create_connection", spy)
    return seen


@pytest.fixture
def fetch(ws) -> Tool:
    return tools_by_name(ws, allow_private_network=True)["fetch_url"]


def test_fetch_html_page(fetch, server):
    result = fetch(url=f"{server}/page")
    assert result == {
        "status": 200,
        "url": f"{server}/page",
        "content_type": "text/html",
        "title": "Fixture Page",
        "text": "Welcome\n\nRead the documentation here today.\n\n- first\n- second",
        "links": [{"text": "documentation here", "url": f"{server}/docs"}],
    }


def test_html_links_are_absolute_deduplicated_and_filtered():
    from toolmode.tools.html_text import html_links

    html = (
        '<a href="b.html">B</a> <a href="/c">C <b>bold</b></a> <a href="b.html#top">B again</a>'
        '<a href="mailto:x@y.z">mail</a> <a href="javascript:void(0)">js</a> <a href="#frag">frag</a>'
        '<a href="https://other.example/x">other</a>'
    )
    assert html_links(html, "http://site.test/dir/page.html") == [
        {"text": "B", "url": "http://site.test/dir/b.html"},
        {"text": "C bold", "url": "http://site.test/c"},
        {"text": "other", "url": "https://other.example/x"},
    ]


def test_fetch_follows_redirects(fetch, server):
    result = fetch(url=f"{server}/redirect")
    assert result["status"] == 200
    assert result["url"] == f"{server}/page"
    assert result["title"] == "Fixture Page"
    assert fetch(url=f"{server}/chain/5")["text"] == "end of chain"
    with pytest.raises(ConnectionError, match="too many redirects"):
        fetch(url=f"{server}/chain/6")


def test_fetch_size_cap(ws, server):
    fetch = tools_by_name(ws, allow_private_network=True, fetch_max_bytes=10_000)["fetch_url"]
    result = fetch(url=f"{server}/big", max_chars=50_000)
    assert result["text"].startswith("x" * 10_000 + "\n")
    assert result["text"].count("x") == 10_000
    assert "stopped reading after 10000 bytes" in result["text"]
    short = fetch(url=f"{server}/big", max_chars=100)["text"]
    assert short == "x" * 100 + "\n[... cut: at least 9900 more characters; raise max_chars to see them]"


def test_fetch_max_chars(fetch, server):
    result = fetch(url=f"{server}/big", max_chars=100)
    assert result["text"] == "x" * 100 + "\n[... cut: 199900 more characters; raise max_chars to see them]"
    with pytest.raises(ValueError, match="max_chars"):
        fetch(url=f"{server}/page", max_chars=0)


def test_fetch_refuses_binary(fetch, server):
    with pytest.raises(ValueError, match=r"binary content \(image/png\)"):
        fetch(url=f"{server}/binary")
    with pytest.raises(ValueError, match="binary content"):
        fetch(url=f"{server}/untyped-binary")


def test_fetch_other_text_types_and_statuses(fetch, server):
    result = fetch(url=f"{server}/json")
    assert (result["content_type"], result["title"], result["text"]) == (
        "application/json",
        None,
        '{"answer": 42}',
    )
    latin = fetch(url=f"{server}/latin1")
    assert (latin["title"], latin["text"]) == ("Café", "déjà vu")
    missing = fetch(url=f"{server}/missing")
    assert (missing["status"], missing["title"], missing["text"]) == (404, "Not here", "No such page.")


def test_fetch_timeout(ws, server):
    fetch = tools_by_name(ws, allow_private_network=True, fetch_timeout=0.3)["fetch_url"]
    with pytest.raises(TimeoutError, match="took longer than 0.3s"):
        fetch(url=f"{server}/slow")


def test_fetch_bad_urls(fetch):
    for url in ["ftp://example.com/file", "file:///etc/passwd", "javascript:alert(1)"]:
        with pytest.raises(PermissionError, match="not an http or https URL"):
            fetch(url=url)
    with pytest.raises(ValueError, match="no host"):
        fetch(url="http:///path")
    with pytest.raises(ValueError, match="invalid URL"):
        fetch(url="http://example.com:99999/")


# ---------------------------------------------------------------- SSRF guard


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://127.0.0.1:{port}/page", "127.0.0.1 is a loopback address"),
        ("http://localhost:{port}/page", "localhost resolves to"),
        ("http://10.0.0.1/", "10.0.0.1 is a private address"),
        ("http://192.168.1.1/", "192.168.1.1 is a private address"),
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a link-local address"),
        ("http://[::1]:{port}/", "::1 is a loopback address"),
        ("http://[::ffff:127.0.0.1]:{port}/", "IPv4-mapped form of 127.0.0.1, a loopback address"),
        ("http://[::ffff:169.254.169.254]/", "IPv4-mapped form of 169.254.169.254, a link-local"),
        ("http://0.0.0.0:{port}/", "0.0.0.0 is an unspecified address"),
        ("http://2130706433:{port}/", "2130706433 resolves to 127.0.0.1, a loopback address"),
        ("http://127.1:{port}/", "resolves to 127.0.0.1"),
    ],
)
def test_fetch_refuses_private_addresses_before_connecting(ws, server, connections, url, message):
    fetch = tools_by_name(ws)["fetch_url"]
    port = urlsplit(server).port
    with pytest.raises(PermissionError, match="refused: ") as info:
        fetch(url=url.format(port=port))
    assert message in str(info.value)
    assert str(info.value).endswith("pass allow_private_network=True to allow it")
    assert connections == []


def test_refusal_message_matches_the_documented_form(ws, connections):
    with pytest.raises(PermissionError) as info:
        tools_by_name(ws)["fetch_url"](url="http://127.0.0.1/")
    assert (
        str(info.value)
        == "refused: 127.0.0.1 is a loopback address; pass allow_private_network=True to allow it"
    )


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("http://10.0.0.1/secret", "10.0.0.1 is a private address"),
        (
            "http://169.254.169.254/latest/meta-data/",
            "169.254.169.254 is a link-local address (the cloud metadata",
        ),
        ("http://[fd00::1]/", "fd00::1 is a private address"),
        ("http://localhost:{port}/page", "localhost resolves to"),
        ("http://127.0.0.2:{port}/page", "127.0.0.2 is a loopback address"),
    ],
)
def test_every_redirect_hop_is_checked(ws, server, connections, target, message):
    """The fixture itself is trusted by host:port; where it redirects to is checked like any URL."""
    port = urlsplit(server).port
    fetch = tools_by_name(ws, allow_hosts=[f"127.0.0.1:{port}"])["fetch_url"]
    assert fetch(url=f"{server}/page")["title"] == "Fixture Page"
    with pytest.raises(PermissionError, match=message.replace("(", r"\(")):
        fetch(url=f"{server}/to?target={target.format(port=port)}")
    assert {address for address in connections} == {("127.0.0.1", port)}


def test_allow_hosts_is_specific_to_the_port(ws, server, connections):
    port = urlsplit(server).port
    fetch = tools_by_name(ws, allow_hosts=[f"127.0.0.1:{port + 1 if port < 65535 else port - 1}"])[
        "fetch_url"
    ]
    with pytest.raises(PermissionError, match="loopback"):
        fetch(url=f"{server}/page")
    assert connections == []


def test_connects_to_the_checked_address_with_the_original_host_header(ws, server, monkeypatch):
    port = urlsplit(server).port
    monkeypatch.setattr(
        netguard.socket,
        "getaddrinfo",
        lambda host, *a, **k: [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))],
    )
    fetch = tools_by_name(ws, allow_hosts=["fixture.test"])["fetch_url"]
    result = fetch(url=f"http://fixture.test:{port}/host")
    assert result["text"] == f"fixture.test:{port}"


def test_dns_rebinding_cannot_swap_the_address(ws, connections, monkeypatch):
    """The host is resolved once; the connection goes to that checked address, not a fresh lookup."""
    answers = iter(["93.184.216.34", "127.0.0.1"])
    lookups: list[str] = []

    def rebinding(host: str, port: int, *args: Any, **kwargs: Any) -> list[Any]:
        lookups.append(host)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (next(answers), port))]

    monkeypatch.setattr(netguard.socket, "getaddrinfo", rebinding)
    with pytest.raises(ConnectionRefusedError, match="test guard"):
        tools_by_name(ws)["fetch_url"](url="http://rebind.test/")
    assert lookups == ["rebind.test"]
    assert connections == [("93.184.216.34", 80)]


@pytest.mark.parametrize(
    ("address", "problem"),
    [
        ("8.8.8.8", None),
        ("2606:4700:4700::1111", None),
        ("127.0.0.1", "a loopback address"),
        ("10.1.2.3", "a private address"),
        ("172.16.0.1", "a private address"),
        ("100.64.0.1", "not a public address"),
        ("169.254.169.254", "a link-local address (the cloud metadata service)"),
        ("0.0.0.0", "an unspecified address"),
        ("224.0.0.1", "a multicast address"),
        ("240.0.0.1", "a reserved address"),
        ("::", "an unspecified address"),
        ("fe80::1", "a link-local address"),
        ("fc00::1", "a private address"),
        ("ff02::1", "a multicast address"),
        ("::ffff:10.0.0.1", "an IPv4-mapped form of 10.0.0.1, a private address"),
        ("::ffff:8.8.8.8", None),
        ("2002:7f00:1::", "an 6to4 form of 127.0.0.1, a loopback address"),
        ("64:ff9b::a00:1", "an NAT64 form of 10.0.0.1, a private address"),
    ],
)
def test_address_problem(address, problem):
    assert netguard.address_problem(ipaddress.ip_address(address)) == problem


def test_policy_parses_allow_hosts():
    policy = netguard.NetPolicy.create(allow_hosts=["Intranet.Local", "127.0.0.1:8080", "[::1]:9000"])
    assert policy.trusts("intranet.local", 443)
    assert policy.trusts("127.0.0.1", 8080) and not policy.trusts("127.0.0.1", 8081)
    assert policy.trusts("::1", 9000)
    with pytest.raises(ValueError, match="invalid allow_hosts entry"):
        netguard.NetPolicy.create(allow_hosts=[":80"])


def test_html_to_text_keeps_pre_and_tables():
    title, text = html_to_text(
        "<title>T</title><pre>a  b\n  c</pre><table><tr><th>k</th><td>v</td></tr></table>x<br>y"
    )
    assert title == "T"
    assert text == "a  b\n  c\n\nk\tv\n\nx\ny"
    assert html_to_text("<body><svg><title>icon</title></svg><p>Body</p></body>") == (None, "Body")
    assert html_to_text("<title>First</title><title>Second</title>")[0] == "First"


def test_no_network_environment_leaks_into_fetch(fetch, server, monkeypatch):
    """Proxy variables are ignored: the connection goes straight to the checked address."""
    monkeypatch.setenv("http_proxy", "http://10.9.9.9:3128")
    assert fetch(url=f"{server}/page")["status"] == 200
    assert os.environ["http_proxy"]  # still set; simply not used


@pytest.mark.parametrize("path", ["a/" * 400_000 + "x", "./" * 3000 + "x", "/" * 5000, "x" * 5000])
def test_paths_over_path_max_are_refused_before_resolving(tools, path):
    # A path of hundreds of thousands of components made realpath take seconds to minutes of host CPU.
    for name, args in (("read_file", {"path": path}), ("write_file", {"path": path, "content": "x"}),
                       ("list_dir", {"path": path})):
        with pytest.raises(ValueError, match="path too long"):
            tools[name](**args)


def test_paths_with_too_many_components_are_refused(tools, ws):
    (ws / "loop").symlink_to(".")
    deep = "loop/" * 300 + "x"  # 1,501 bytes, under PATH_MAX, but 300 levels
    with pytest.raises(ValueError, match="too many components"):
        tools["write_file"](path=deep, content="x")
    assert tools["write_file"](path="loop/" * 100 + "x", content="ok") == "wrote 2 bytes to x"
