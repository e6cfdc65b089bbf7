"""Server specs: a command line, a `{command, args, env}` dict, a URL or `{url, headers}`; and `mcp.json`."""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from toolmode.mcp.convert import python_name


@dataclass(frozen=True)
class ServerSpec:
    """How to reach one MCP server: a command (stdio) or a URL (streamable HTTP)."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        """The command line or URL, for messages (headers and env values are left out: they hold secrets)."""
        if self.url:
            return self.url
        return shlex.join([self.command or "", *self.args])


Spec = str | Mapping[str, Any]


def parse_spec(
    spec: Spec | Any, *, name: str | None = None, env: Mapping[str, str] | None = None
) -> ServerSpec:
    """Read a server spec; `name` defaults to one derived from the command or URL (`uvx mcp-server-time` -> `time`).

    Accepts a command line string, an http(s) URL, a mapping with `command` (+ `args`, `env`, `cwd`) or
    `url` (+ `headers`), or an `mcp.StdioServerParameters`. `env` is merged over the spec's own env.
    """
    if hasattr(spec, "model_dump") and hasattr(spec, "command"):  # mcp.StdioServerParameters
        spec = spec.model_dump(include={"command", "args", "env", "cwd"})
    if isinstance(spec, str):
        text = spec.strip()
        if re.match(r"https?://", text):
            spec = {"url": text}
        else:
            words = shlex.split(text)
            if not words:
                raise ValueError("empty MCP server command")
            spec = {"command": words[0], "args": words[1:]}
    if not isinstance(spec, Mapping):
        raise TypeError(
            f"MCP server spec must be a command line, a URL or a mapping, got {type(spec).__name__}"
        )
    kind = str(spec.get("type") or spec.get("transport") or "").lower()
    if kind == "sse":
        raise ValueError("MCP servers over SSE are not supported; use stdio or streamable HTTP")
    if spec.get("url"):
        url = str(spec["url"])
        headers = {str(k): str(v) for k, v in (spec.get("headers") or {}).items()}
        return ServerSpec(name=name or _name_from_url(url), url=url, headers=headers)
    if not spec.get("command"):
        raise ValueError(f"MCP server spec needs a 'command' or a 'url': {dict(spec)!r}")
    command = str(spec["command"])
    args = tuple(str(a) for a in spec.get("args") or ())
    merged = {str(k): str(v) for k, v in (spec.get("env") or {}).items()} | dict(env or {})
    cwd = str(spec["cwd"]) if spec.get("cwd") else None
    return ServerSpec(
        name=name or _name_from_command(command, args), command=command, args=args, env=merged, cwd=cwd
    )


def load_config(config: str | os.PathLike[str] | Mapping[str, Any]) -> list[ServerSpec]:
    """The servers of an `mcp.json` (`{"mcpServers": {name: spec}}`; `"servers"` is read too), in file order.

    Entries with `"disabled": true` are skipped.
    """
    if not isinstance(config, Mapping):
        path = Path(config)
        try:
            config = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"MCP config {path}: not JSON ({exc})") from None
        if not isinstance(config, Mapping):
            raise ValueError(
                f'MCP config {path}: expected an object {{"mcpServers": {{name: server}}}}, '
                f"got a JSON {type(config).__name__}"
            )
    servers = config.get("mcpServers", config.get("servers"))
    if not isinstance(servers, Mapping):
        raise ValueError('MCP config must have an "mcpServers" object mapping names to servers')
    specs = []
    for name, entry in servers.items():
        if not isinstance(entry, Mapping):
            raise ValueError(f"MCP server {name!r} in config: expected an object, got {type(entry).__name__}")
        if entry.get("disabled"):
            continue
        try:
            specs.append(parse_spec(entry, name=str(name)))
        except (ValueError, TypeError) as exc:
            raise ValueError(f"MCP server {name!r} in config: {exc}") from None
    return specs


_LAUNCHERS = {
    "uvx",
    "npx",
    "pipx",
    "bunx",
    "pnpx",
    "python",
    "python3",
    "node",
    "deno",
    "uv",
    "docker",
    "bun",
}
_SKIP_WORDS = {"run", "exec", "dlx", "tool"}
_VALUE_FLAGS = {"--from", "--with", "-p", "--package", "--python"}
_GENERIC = {"index", "main", "server", "cli", "dist", "build", "src", "bin", "lib", "mcp", "app", "__main__"}


def _name_from_command(command: str, args: tuple[str, ...]) -> str:
    main = command
    if (
        re.fullmatch(r"[a-z]+[0-9.]*", Path(command).name)
        and Path(command).name.rstrip("0123456789.") in _LAUNCHERS
    ):
        rest, skip = [], False
        for word in args:
            if skip or word in _SKIP_WORDS:
                skip = False
                continue
            if word in _VALUE_FLAGS:
                skip = True
            elif not word.startswith("-"):
                rest.append(word)
        main = rest[0] if rest else command
    main = re.sub(r"(?<=.)@[^@/]*$", "", main)  # a version pin: pkg@1.2, @scope/pkg@latest
    parts = [re.sub(r"\.(py|js|mjs|cjs|ts)$", "", p) for p in re.split(r"[/\\]", main) if p]
    names = [_strip_affixes(p.lstrip("@")) for p in reversed(parts)]
    name = next((n for n in names if n and n not in _GENERIC), names[0] if names else "")
    return python_name(name) if name else "mcp"


def _strip_affixes(word: str) -> str:
    word = word.lower()
    word = re.sub(r"^(mcp[-_]server[-_]|server[-_]|mcp[-_])", "", word)
    return re.sub(r"([-_]mcp([-_]server)?|[-_]server)$", "", word)


def _name_from_url(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    if host == "localhost" or re.fullmatch(r"[0-9.]+|[0-9a-f:]+", host):
        return f"mcp_{parts.port}" if parts.port else "mcp"
    labels = [x for x in host.split(".")[:-1] if x not in ("www", "mcp", "api")]
    return python_name(labels[-1] if labels else host or "mcp")
