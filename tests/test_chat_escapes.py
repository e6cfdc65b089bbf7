"""Chat's one-line error for a mode that cannot start (its text can come from an MCP server) reaches the
terminal with control characters escaped: no clipboard write (OSC 52), no screen clear, one line."""

from __future__ import annotations

from typing import Any

import pytest

from toolmode import Agent, chat_cli
from toolmode.testing import reply

HOSTILE = "server said \x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\u202eevil\nsecond line"


def test_mode_switch_error_is_escaped(scripted, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    server = scripted([reply("hi")])
    lines = iter(["/mode code", None])
    monkeypatch.setattr(chat_cli, "read_message", lambda prompt="": next(lines))

    def make_agent(mode: str) -> Any:
        if mode == "code":
            raise ValueError(HOSTILE)
        return Agent(tools=[], mode="react", base_url=server.base_url, model="scripted", console=False)

    assert chat_cli.chat_loop(make_agent, "react") == 0
    err = capsys.readouterr().err
    assert "cannot switch to code" in err and "\\x1b]52;" in err and "\\u202e" in err
    assert "\x1b" not in err and "\x07" not in err and "\u202e" not in err
    assert err.count("\n") == 1
