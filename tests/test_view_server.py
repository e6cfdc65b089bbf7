"""`toolmode view`'s server: loopback only, GET/HEAD only, the folder's files only, the security headers; the command."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.view_data import serving

from toolmode.testing.runs import record_runs
from toolmode.view.server import CSP, ViewServer


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """runs/ with two real traces, a secret beside the folder, and links planted inside it."""
    top = tmp_path_factory.mktemp("view-server")
    root = top / "runs"
    record_runs(root, 2)
    secret = top / "secret.jsonl"  # a trace outside the served folder
    record_runs(top / "elsewhere", 1)[0].rename(secret)
    (root / "link-out.jsonl").symlink_to(secret)
    (root / "linked-dir").symlink_to(top / "elsewhere", target_is_directory=True)
    twin = root / "twin.jsonl"  # a trace with a second name: both names are refused (the file has 2 links)
    twin.write_bytes(next(root.glob("2*.jsonl")).read_bytes())
    os.link(twin, root / "hard.jsonl")
    (root / "dir.jsonl").mkdir()
    os.mkfifo(root / "fifo.jsonl")
    return root


@pytest.fixture(scope="module")
def server(folder: Path) -> Iterator[ViewServer]:
    with serving(folder) as server:
        yield server


def request(server: ViewServer, path: str, method: str = "GET", headers: dict[str, str] | None = None,
            body: bytes | None = None) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for name, value in {"Host": f"127.0.0.1:{server.port}", **(headers or {})}.items():
            if value is not None:
                conn.putheader(name, value)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def get_json(server: ViewServer, path: str) -> tuple[int, dict]:
    status, _, body = request(server, path)
    return status, json.loads(body)


def test_it_binds_loopback_only(server: ViewServer) -> None:
    assert server.server_address[0] == "127.0.0.1" and server.url == f"http://127.0.0.1:{server.port}/"
    others = {info[4][0] for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)} - {"127.0.0.1"}
    for address in [a for a in others if not a.startswith("127.")]:
        with pytest.raises(OSError):
            socket.create_connection((address, server.port), timeout=5).close()


def test_every_answer_carries_the_security_headers(server: ViewServer) -> None:
    for path in ("/", "/static/app.js", "/static/app.css", "/api/runs", "/api/run?path=..%2Fx.jsonl", "/nope",
                 "/favicon.ico"):
        status, headers, _ = request(server, path)
        assert headers["content-security-policy"] == CSP, path
        assert headers["x-content-type-options"] == "nosniff" and headers["referrer-policy"] == "no-referrer"
        assert headers["x-frame-options"] == "DENY" and headers["cache-control"] == "no-store"
    # the policy allows this origin's own files and nothing inline or remote
    directives = dict(d.strip().split(" ", 1) for d in CSP.split(";"))
    assert directives["default-src"] == "'none'" and directives["script-src"] == "'self'"
    assert "unsafe" not in CSP and "http" not in CSP and "*" not in CSP and "data:" not in CSP
    status, headers, body = request(server, "/")
    assert status == 200 and headers["content-type"] == "text/html; charset=utf-8"
    assert b"<script src=\"/static/app.js\"></script>" in body and body.count(b"<script") == 1


def test_another_host_name_is_refused(server: ViewServer) -> None:
    """A DNS-rebinding page reaches 127.0.0.1 under its own name: the Host header gives it away."""
    for host in ("evil.example", f"evil.example:{server.port}", "127.0.0.1", f"127.0.0.1:{server.port + 1}",
                 f"localhost.evil.example:{server.port}", f"[::1]:{server.port}", ""):
        status, _, body = request(server, "/api/runs", headers={"Host": host})
        assert status == 403 and b"answers only to the Host" in body, host
    assert request(server, "/api/runs", headers={"Host": None})[0] == 403  # no Host at all
    for host in (f"127.0.0.1:{server.port}", f"localhost:{server.port}"):
        assert request(server, "/api/runs", headers={"Host": host})[0] == 200


def test_only_get_and_head_are_answered(server: ViewServer, folder: Path) -> None:
    before = sorted(p.name for p in folder.iterdir())
    for method in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS"):
        status, headers, _ = request(server, "/api/runs", method=method, body=b'{"a": 1}')
        assert status == 405 and headers["allow"] == "GET, HEAD", method
    assert request(server, "/api/runs", method="TRACE")[0] == 405
    assert sorted(p.name for p in folder.iterdir()) == before
    status, headers, body = request(server, "/api/runs", method="HEAD")
    assert status == 200 and body == b"" and int(headers["content-length"]) > 100


def test_requests_from_other_sites_get_only_the_page(server: ViewServer) -> None:
    for site in ("cross-site", "same-site"):
        assert request(server, "/api/runs", headers={"Sec-Fetch-Site": site})[0] == 403
        assert request(server, "/static/app.js", headers={"Sec-Fetch-Site": site})[0] == 403
        navigate = {"Sec-Fetch-Site": site, "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}
        assert request(server, "/", headers=navigate)[0] == 200  # a link to the viewer still opens it
    assert request(server, "/api/runs", headers={"Sec-Fetch-Site": "same-origin"})[0] == 200


def test_paths_outside_the_folder_are_refused(server: ViewServer, folder: Path) -> None:
    for path, status in (("../secret.jsonl", 400), ("..%2Fsecret.jsonl", 400), ("%2e%2e/secret.jsonl", 400),
                         (str(folder.parent / "secret.jsonl"), 400), ("a//b.jsonl", 400), ("./x.jsonl", 400),
                         ("x.jsonl%00", 400), ("link-out.jsonl", 403), ("linked-dir/x.jsonl", 403),
                         ("hard.jsonl", 403), ("dir.jsonl", 403), ("fifo.jsonl", 403), ("missing.jsonl", 404)):
        got, data = get_json(server, "/api/run?path=" + path.replace("/", "%2F") if path.startswith("/") else
                             "/api/run?path=" + path)
        assert got == status and data["error"], (path, data)
    assert get_json(server, "/api/run?path=secret.txt")[0] == 400  # only traces
    # the bench routes check their paths the same way
    assert get_json(server, "/api/bench?path=..")[0] == 400
    assert get_json(server, "/api/bench?path=linked-dir")[0] == 400
    assert get_json(server, "/api/chart?path=&name=../../etc")[0] == 400


def test_the_list_holds_the_folders_own_traces_and_says_what_it_skipped(server: ViewServer) -> None:
    status, listing = get_json(server, "/api/runs")
    assert status == 200
    paths = {r["path"] for r in listing["runs"]}
    assert len(paths) == 2 and all(p.startswith("2") for p in paths)  # the two real runs, nothing linked
    skipped = "\n".join(listing["skipped"])
    assert "link-out.jsonl: a symlink, not followed" in skipped
    assert "hard.jsonl" in skipped and "twin.jsonl" in skipped and "has 2 hard links" in skipped
    assert not any("secret" in p or "linked-dir" in p for p in paths)


def test_a_changed_trace_is_read_again_and_an_unchanged_one_is_not(tmp_path: Path) -> None:
    (trace,) = record_runs(tmp_path, 1)
    with serving(tmp_path) as server:
        first = get_json(server, "/api/runs")[1]["runs"][0]
        stat = trace.stat()
        text = trace.read_text()
        trace.write_text(text.replace('"stopped": "answer"', '"stopped": "budget"'))  # same size
        os.utime(trace, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        assert get_json(server, "/api/runs")[1]["runs"][0]["stopped"] == "answer"  # cached by size and time
        with trace.open("a") as f:
            f.write('{"kind": "notice", "t": 9, "message": "later"}\n')
        again = get_json(server, "/api/runs")[1]["runs"][0]
    assert first["stopped"] == "answer" and again["stopped"] == "unfinished"  # read again: ends with a notice


def test_view_command_serves_until_ctrl_c(tmp_path: Path) -> None:
    record_runs(tmp_path / "runs", 1)
    env = {**os.environ, "DISPLAY": "", "WAYLAND_DISPLAY": "", "BROWSER": ""}
    proc = subprocess.Popen([sys.executable, "-m", "toolmode", "view", "--no-browser"], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()  # the signal that it serves
        assert line.startswith("toolmode view: ") and "http://127.0.0.1:" in line, (line, proc.stderr.read())
        port = int(line.split("http://127.0.0.1:")[1].split("/")[0])
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", "/api/runs")
        listing = json.loads(conn.getresponse().read())
        conn.close()
        assert len(listing["runs"]) == 1 and listing["folder"] == "runs"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0
        assert "stopped" in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_view_command_given_one_trace_opens_its_page(tmp_path: Path) -> None:
    (trace,) = record_runs(tmp_path / "runs", 1)
    proc = subprocess.Popen([sys.executable, "-m", "toolmode", "view", "--no-browser", str(trace)], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.rstrip().endswith(f"/#/run?path={trace.name} (Ctrl-C stops)") and str(tmp_path / "runs") in line
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0


def run_view(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolmode", "view", "--no-browser", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=60)


def test_view_command_refusals_are_one_line(tmp_path: Path) -> None:
    proc = run_view([], tmp_path)
    assert proc.returncode == 2 and proc.stderr.strip().splitlines() == [
        "toolmode view: no folder 'runs' here (toolmode run writes its traces to ./runs); name one: toolmode view PATH"]
    (tmp_path / "file").write_text("x")
    proc = run_view(["file"], tmp_path)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and "file" in proc.stderr
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    proc = run_view(["link"], tmp_path)
    assert proc.returncode == 2 and "symlink" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        proc = run_view(["real", "--port", str(busy.getsockname()[1])], tmp_path)
    assert proc.returncode == 2 and "cannot serve on 127.0.0.1:" in proc.stderr
    assert run_view(["real", "--port", "70000"], tmp_path).returncode == 2


def test_the_viewer_is_not_loaded_by_import_or_help(tmp_path: Path) -> None:
    code = ("import sys, toolmode\nfrom toolmode.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n"
            "    pass\nprint([m for m in sys.modules if m.startswith('toolmode.view') or m in ('pygments', 'webbrowser')])")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    *help_text, modules = proc.stdout.strip().splitlines()
    assert any(line.split()[:1] == ["view"] for line in help_text)  # listed in --help
    assert modules == "[]"


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real (scripted) bench folder with its report and charts, inside a runs folder."""
    top = tmp_path_factory.mktemp("view-bench")
    out = top / "bench-1"
    proc = subprocess.run([sys.executable, "-m", "toolmode", "bench", "--scripted", "--tasks", "log_stats", "--modes",
                           "react,code", "--runs", "1", "--out", str(out)], cwd=top, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return top


def test_a_bench_shows_the_reports_own_table_charts_and_episodes(bench: Path) -> None:
    from toolmode.bench.results import read_results, read_settings
    from toolmode.bench.stats import MEASURES, summarize
    from toolmode.bench.table import fmt

    records = read_results(bench / "bench-1")
    settings = read_settings(bench / "bench-1")
    cells = summarize(records, settings.get("task_order"), settings.get("mode_order"))
    with serving(bench) as server:
        listing = get_json(server, "/api/runs")[1]
        assert [b["path"] for b in listing["benches"]] == ["bench-1"] and not listing["is_bench"]
        status, page = get_json(server, "/api/bench?path=bench-1")
        assert status == 200 and page["scripted"] and page["title"].startswith("[SCRIPTED")
        assert [(r["task"], r["mode"], r["n"], r["cols"]) for r in page["rows"]] == [
            (c.task, c.mode, c.n, [fmt(c.success, "success")] + [fmt(c.measures[k], k) for k, _ in MEASURES])
            for c in cells]
        assert page["charts"] == ["tokens", "prompt_growth", "success", "cost"]
        for name in page["charts"]:  # the very PNG the bench's report wrote
            status, headers, png = request(server, f"/api/chart?path=bench-1&name={name}")
            assert status == 200 and headers["content-type"] == "image/png"
            assert png == (bench / "bench-1" / f"{name}.png").read_bytes()
        listed = {r["path"]: r for r in listing["runs"]}
        assert len(page["episodes"]) == len(records) == 2
        for episode, record in zip(page["episodes"], records, strict=True):
            row = listed[episode["trace"]]  # each episode links to a run the list shows
            assert row["bench"] == "bench-1" and row["prompt_tokens"] == record["prompt_tokens"]
            status, run = get_json(server, "/api/run?path=" + episode["trace"])
            assert status == 200 and run["summary"]["bench"] == "bench-1"  # the run page links back


def test_a_bench_record_cannot_link_outside_its_folder(bench: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "b"
    shutil.copytree(bench / "bench-1", copy)
    record = json.loads((copy / "results.jsonl").read_text().splitlines()[0])
    with (copy / "results.jsonl").open("a") as f:
        for run, trace in enumerate(("../../secret.jsonl", "/etc/passwd.jsonl", "episodes/../../x.jsonl", 7), 10):
            f.write(json.dumps({**record, "run": run, "trace": trace}) + "\n")
    with serving(tmp_path) as server:
        episodes = get_json(server, "/api/bench?path=b")[1]["episodes"]
    assert [e["trace"] for e in episodes[-4:]] == [None] * 4 and all(e["trace"] for e in episodes[:2])


def test_a_bench_folder_opened_itself_is_a_bench(bench: Path) -> None:
    with serving(bench / "bench-1") as server:
        listing = get_json(server, "/api/runs")[1]
        assert listing["is_bench"] and listing["benches"][0]["path"] == ""
        assert get_json(server, "/api/bench?path=")[0] == 200


def test_view_command_opens_the_page_in_the_users_browser(tmp_path: Path) -> None:
    """$BROWSER is honoured (Python's webbrowser): the command it names gets the page's address."""
    import threading

    record_runs(tmp_path / "runs", 1)
    pipe = tmp_path / "opened"
    os.mkfifo(pipe)  # the fake browser writes the address it was given into it: the signal the test waits on
    fake = tmp_path / "fake-browser"
    fake.write_text(f"#!{sys.executable}\nimport sys\nopen({str(pipe)!r}, 'w').write(sys.argv[1])\n")
    fake.chmod(0o755)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(pipe.read_text()), daemon=True)
    reader.start()
    env = {**os.environ, "BROWSER": str(fake), "DISPLAY": "", "WAYLAND_DISPLAY": ""}
    proc = subprocess.Popen([sys.executable, "-m", "toolmode", "view"], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        url = "http://" + line.split("http://")[1].split()[0]
        reader.join(timeout=90)
        assert got == [url]
    finally:
        if reader.is_alive():  # never opened: unblock the reader
            os.close(os.open(pipe, os.O_WRONLY | os.O_NONBLOCK))
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
