"""Approval in the terminal, for `toolmode run` and `toolmode chat`: the prompt, the flag and the user config.

The prompt shows the tool and its arguments (escaped: the model controls them) and reads one line:
`y` (run it), `n` or `n <reason>` (refuse it), `a` (run it, and every later call of this tool this session),
`e` (edit the arguments as a JSON object; checked against the tool's parameters; an invalid edit asks again).

`--approve ask|all|none` and the user config (`[approval]` of `$XDG_CONFIG_HOME/toolmode/config.toml`, by default
`~/.config/toolmode/config.toml`; never a file inside the workspace, which the model can write) make the rules.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

from toolmode.approval.decision import ApprovalRequest, Approved, Decision, Denied, check_policy
from toolmode.approval.rules import ApprovalRules
from toolmode.textsafe import escape_control

APPROVE_CHOICES = ("ask", "all", "none")
ARGUMENTS_SHOWN = 2000  # characters of the arguments shown; the rest is cut with a note


class TerminalApprover:
    """Asks the person at the terminal (one question at a time; parallel calls wait their turn)."""

    waits_for = "terminal"

    def __init__(self, tools: Iterable[Any] = (), stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        self.tools = {t.name: t for t in tools}
        self.stdin, self.stdout = stdin or sys.stdin, stdout or sys.stdout
        self.always: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self, request: ApprovalRequest) -> Decision:
        """Ask about `request` until the answer is readable; end of input refuses."""
        with self._lock:
            if request.tool in self.always:
                self._say(f"✓ {_safe(request.tool)}: approved (always, this session)")
                return Approved()
            arguments = request.arguments
            where = " from run_code" if request.where == "run_code" else ""
            self._say(f"  ? approval needed: {_safe(request.tool)}{where} (step {request.step})")
            self._say(f"  arguments: {_shown(arguments)}")
            while True:
                answer = self._ask(f"  allow? [y]es / [n]o (n <reason>) / [a]lways {_safe(request.tool)} / [e]dit: ")
                if answer is None:
                    return Denied("no answer (end of input)")
                word, _, rest = answer.strip().partition(" ")
                word = word.lower()
                if word in ("y", "yes"):
                    return Approved()
                if word in ("n", "no"):
                    return Denied(rest.strip())
                if word in ("a", "always"):
                    self.always.add(request.tool)
                    return Approved()
                if word in ("e", "edit"):
                    edited = self._edit(request)
                    if edited is not None:
                        return Approved(edited)
                    continue
                self._say("  answer y, n, a or e")

    def _edit(self, request: ApprovalRequest) -> dict[str, Any] | None:
        """New arguments as one line of JSON, checked; None (ask again) when they are not usable."""
        line = self._ask("  arguments as JSON: ")
        if line is None:
            return None
        try:
            edited = json.loads(line)
        except json.JSONDecodeError as exc:
            self._say(f"  not JSON ({exc.msg} at position {exc.pos}); asking again")
            return None
        if not isinstance(edited, dict):
            self._say(f"  the arguments must be a JSON object, not {type(edited).__name__}; asking again")
            return None
        tool = self.tools.get(request.tool)
        if tool is not None:
            try:
                tool.validate(edited)
            except Exception as exc:  # noqa: BLE001 - the tool's own check, whatever it raises
                self._say(f"  {_safe(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)}; asking again")
                return None
        self._say(f"  edited: {_shown(edited)}")
        return edited

    def _ask(self, prompt: str) -> str | None:
        self.stdout.write(prompt)
        self.stdout.flush()
        line = self.stdin.readline()
        return None if not line else line.rstrip("\n")

    def _say(self, text: str) -> None:
        self.stdout.write(text + "\n")
        self.stdout.flush()


class NoTerminal:
    """No one to ask (stdin is not a terminal): an `ask` is refused, with one line on stderr saying how to decide."""

    waits_for = "terminal"

    def __init__(self, config: Path | None) -> None:
        where = f" or set a policy in {config}" if config else ""
        self.reason = ("no one to ask: stdin is not a terminal (pass --approve all or --approve none"
                       f"{where})")

    def __call__(self, request: ApprovalRequest) -> Decision:
        """Refuse, and say so on stderr."""
        print(f"toolmode: refused {_safe(request.tool)}: {self.reason}", file=sys.stderr, flush=True)
        return Denied(self.reason)


class FlagDecider:
    """`--approve all` / `--approve none`: every `ask` is approved / refused without asking."""

    waits_for = "rule"

    def __init__(self, approve: bool) -> None:
        self.approve = approve

    def __call__(self, request: ApprovalRequest) -> Decision:
        """The flag's decision."""
        return Approved() if self.approve else Denied("refused by --approve none")


def config_path() -> Path:
    """The user config file: `$XDG_CONFIG_HOME/toolmode/config.toml` (default `~/.config/toolmode/config.toml`)."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "toolmode" / "config.toml"


def read_config(path: Path, workspace: str | os.PathLike[str] | None) -> dict[str, str]:
    """The `[approval]` table of the user config as approval= (`default` becomes "*"); {} when there is no file.
    A file inside the workspace is never read (the model can write there); a bad one is a ValueError."""
    if workspace is not None:
        resolved, ws = path.resolve(), Path(workspace).resolve()
        if resolved.is_relative_to(ws):
            print(f"toolmode: not reading {path}: it lies inside the workspace {ws}, which the model can write",
                  file=sys.stderr, flush=True)
            return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read the config {path}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"the config {path} is not valid TOML: {exc}") from None
    table = data.get("approval", {})
    if not isinstance(table, dict):
        raise ValueError(f"the config {path}: [approval] must be a table of tool = \"allow\" | \"ask\" | \"deny\"")
    return {("*" if name == "default" else name): check_policy(value, f"{path} [approval] {name}")
            for name, value in table.items()}


def cli_approval(flag: str | None, tools: list[Any], workspace: str | None, *, interactive: bool | None = None,
                 ) -> tuple[ApprovalRules, Any]:
    """The rules and the decider of a `toolmode run` / `chat` session (see the module's docstring)."""
    path = config_path()
    rules = ApprovalRules(read_config(path, workspace), tools, escalate=flag == "ask")
    if flag in ("all", "none"):
        return rules, FlagDecider(flag == "all")
    if interactive is None:
        interactive = sys.stdin.isatty()
    return rules, TerminalApprover(tools) if interactive else NoTerminal(path if path.is_file() else None)


def bench_refusal(flag: str | None, tools: list[Any], workspace: str | None) -> str | None:
    """Why `toolmode bench` cannot start (an `ask` somewhere: episodes are unattended), or None."""
    if flag == "ask":
        return "toolmode bench runs unattended and cannot ask: use --approve all or --approve none"
    if flag in ("all", "none"):
        return None
    path = config_path()
    rules = ApprovalRules(read_config(path, workspace), tools)
    asks = sorted({*(n for n, p in rules.named.items() if p == "ask"), *(n for n, p in rules.own.items() if p == "ask"),
                   *(["default"] if rules.rest == "ask" else [])})
    if asks:
        return (f"toolmode bench runs unattended and cannot ask, but approval says ask for {', '.join(asks)} "
                f"({path}); pass --approve all or --approve none")
    return None


def _safe(text: str) -> str:
    return escape_control(text).replace("\n", "\\n")


def _shown(arguments: dict[str, Any]) -> str:
    text = escape_control(json.dumps(arguments, ensure_ascii=False))
    if len(text) > ARGUMENTS_SHOWN:
        return f"{text[:ARGUMENTS_SHOWN]} ... [{len(text) - ARGUMENTS_SHOWN:,} more characters]"
    return text
