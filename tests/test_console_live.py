"""On a terminal, `toolmode run` and `chat` show a spinner with the seconds waited for each reply and, with
`--stream`, the reply's text as it arrives; in a pipe, with --quiet or with --json they show neither.

Each command runs in a real pseudo-terminal and everything it wrote is read back until it exits.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios

from toolmode.testing import fault, reply

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
PIECES = ["AAAAAA", "BBBBBB", "CCCCCC", "DDDDDD"]  # the scripted server streams a content in 4 equal pieces
ENV = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k not in ("COLUMNS", "LINES")}


def in_a_terminal(*args: str, keys: tuple[tuple[str, bytes], ...] = ()) -> str:
    """Run `python -m toolmode ARGS` on a 100x30 pseudo-terminal; all it wrote, read until it exits.

    `keys` are typed on its keyboard, each `(after, data)` once `after` has been shown (as plain text).
    """
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "toolmode", *args], stdin=slave, stdout=slave, stderr=slave,
                            env={**ENV, "TERM": "xterm-256color"}, close_fds=True)
    os.close(slave)
    pending = list(keys)
    out = bytearray()
    try:
        while select.select([master], [], [], 60)[0]:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child has closed the terminal
                break
            if not data:
                break
            out += data
            if pending and pending[0][0] in ANSI.sub("", out.decode("utf-8", errors="replace")):
                os.write(master, pending.pop(0)[1])
    finally:
        os.close(master)
        proc.wait(timeout=60)
    return out.decode("utf-8", errors="replace")


def run_args(server, *extra: str) -> list[str]:
    return ["run", "--mode", "react", "--no-builtin", "--no-trace", "--base-url", server.base_url,
            "--model", "m", *extra, "say the letters"]


def test_run_streams_the_text_and_shows_a_spinner_on_a_terminal(scripted) -> None:
    server = scripted([fault("slow", delay=0.3, then=reply("".join(PIECES)))])
    raw = in_a_terminal(*run_args(server, "--stream"))
    text = ANSI.sub("", raw)
    assert re.search(r"waiting for m · 0\.\d s", text)  # the spinner, with the time waited
    # each piece was on screen before the next arrived, under the spinner that says the reply is coming
    shown = [m.group(1) for m in re.finditer(r"([A-D]+)\r?\n\S+ +m is replying · \d+\.\d s", text)]
    assert list(dict.fromkeys(shown)) == ["AAAAAA", "AAAAAABBBBBB", "AAAAAABBBBBBCCCCCC", "AAAAAABBBBBBCCCCCCDDDDDD"]
    # then the region is erased and the step view reads as always
    assert text.index("is replying") < text.index("step 1") < text.index("answer\r\nAAAAAABBBBBBCCCCCCDDDDDD")


def test_streamed_text_is_escaped_like_every_console_line(scripted) -> None:
    server = scripted([reply("clear \x1b[2J screen \x1b]52;c;aGk=\x07 done")])
    raw = in_a_terminal(*run_args(server, "--stream"))
    assert "\x1b[2J" not in raw and "\x1b]52" not in raw  # nothing the model wrote acts on the terminal
    assert "\\x1b[2J screen \\x1b]52;c;aGk=\\x07" in ANSI.sub("", raw)


def test_without_stream_the_spinner_still_shows_the_wait(scripted) -> None:
    server = scripted([fault("slow", delay=0.3, then=reply("plain"))])
    text = ANSI.sub("", in_a_terminal(*run_args(server)))
    assert "waiting for m · 0.0 s" in text and "is replying" not in text
    assert text.index("waiting for m") < text.index("step 1")


def test_a_pipe_gets_the_step_view_alone(scripted) -> None:
    server = scripted([reply("".join(PIECES))])
    proc = subprocess.run([sys.executable, "-m", "toolmode", *run_args(server, "--stream")], capture_output=True,
                          text=True, timeout=60, env=ENV)
    assert proc.returncode == 0, proc.stderr
    assert "waiting for" not in proc.stdout + proc.stderr and "\x1b" not in proc.stdout + proc.stderr
    assert proc.stdout.count("AAAAAABBBBBBCCCCCCDDDDDD") == 1  # the answer, once; no live pieces


def test_quiet_and_json_show_no_spinner_on_a_terminal(scripted) -> None:
    server = scripted([reply("".join(PIECES)), reply("".join(PIECES))])
    quiet = in_a_terminal(*run_args(server, "--stream", "--quiet"))
    assert ANSI.sub("", quiet).strip() == "AAAAAABBBBBBCCCCCCDDDDDD"
    as_json = in_a_terminal(*run_args(server, "--stream", "--json"))
    assert "\x1b" not in as_json
    assert json.loads(as_json.replace("\r\n", "\n"))["answer"] == "AAAAAABBBBBBCCCCCCDDDDDD"


def test_chat_streams_the_text_and_shows_a_spinner(scripted, tmp_path) -> None:
    server = scripted([fault("slow", delay=0.3, then=reply("".join(PIECES)))])
    raw = in_a_terminal("chat", "--mode", "react", "--no-builtin", "--stream", "--runs-dir", str(tmp_path),
                        "--base-url", server.base_url, "--model", "m",
                        keys=(("you> ", b"say the letters\n"), ("AAAAAABBBBBBCCCCCCDDDDDD\r\n", b"\x04")))
    text = ANSI.sub("", raw)
    assert re.search(r"waiting for m · 0\.\d s", text)
    assert re.search(r"AAAAAA\r?\n\S+ +m is replying", text)
    assert text.index("is replying") < text.index("answer\r\nAAAAAABBBBBBCCCCCCDDDDDD")
