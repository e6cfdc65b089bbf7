"""The builtin tools: files and shell confined to a workspace, a guarded web fetch, a clock and a calculator."""

from __future__ import annotations

import difflib
import os
import re
import stat
import zoneinfo
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from functools import cache
from typing import Any, TextIO

from toolmode.callscope import remaining_time
from toolmode.runctx import cap_timeout
from toolmode.runctx import current as current_run
from toolmode.tools import html_text
from toolmode.tools.base import Tool
from toolmode.tools.calculator import calculator
from toolmode.tools.netguard import NetPolicy, guarded_get
from toolmode.tools.safe_open import O_PATH
from toolmode.tools.workspace import Workspace

TOOL_NAMES = ("list_dir", "read_file", "write_file", "run_shell", "fetch_url", "current_time", "calculator")
SHELL_MAX_OUTPUT = 100_000
READ_MAX_CHARS = 1_000_000
_BINARY_SNIFF_BYTES = 8192
_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY  # O_NONBLOCK: a FIFO cannot block the open


def builtin_tool_names() -> list[str]:
    """Names of the tools `builtin_tools` returns, in that order."""
    return list(TOOL_NAMES)


def builtin_tools(
    workspace: str | os.PathLike[str] = ".",
    *,
    allow_private_network: bool = False,
    shell_timeout: float = 30.0,
    fetch_timeout: float = 15.0,
    fetch_max_bytes: int = 2_000_000,
    allow_hosts: Iterable[str] = (),
    allow_env_in_workspace: bool = False,
) -> list[Tool]:
    """The builtin tools, with `source="builtin"`.

    File tools and run_shell are confined to `workspace` (an existing directory). `shell_timeout` is
    run_shell's default and maximum timeout. fetch_url gives up after `fetch_timeout` seconds in all,
    stops reading after `fetch_max_bytes`, and refuses non-public addresses unless
    `allow_private_network` is true; `allow_hosts` (entries `host` or `host:port`) trusts specific
    hosts only, every other host and redirect hop is still checked (see `netguard.NetPolicy`).
    """
    ws = Workspace(workspace)
    if not ws.root.is_dir():
        raise NotADirectoryError(f"workspace {ws.root} is not an existing directory")
    if shell_timeout <= 0 or fetch_timeout <= 0 or fetch_max_bytes <= 0:
        raise ValueError("shell_timeout, fetch_timeout and fetch_max_bytes must be positive")
    policy = NetPolicy.create(allow_private_network=allow_private_network, allow_hosts=allow_hosts)
    functions: list[Callable[..., Any]] = [
        *_file_functions(ws),
        _shell_function(ws, shell_timeout, allow_env_in_workspace),
        _fetch_function(policy, fetch_timeout, fetch_max_bytes),
        current_time,
        calculator,
    ]
    tools = [Tool.from_function(fn) for fn in functions]
    for item in tools:
        item.source = "builtin"
    return tools


# ---------------------------------------------------------------- files


def _file_functions(ws: Workspace) -> list[Callable[..., Any]]:
    def list_dir(path: str = ".") -> list[dict]:
        """List a directory in the workspace.

        Args:
            path: Directory to list, relative to the workspace root (default: the root).

        Returns:
            One dict per entry, sorted by name: {"name": str, "type": "file" | "dir" | "symlink" | "other",
            "size": int | None}; size is in bytes for files and None for the rest.
        """
        try:
            fd, _ = ws.open(path, O_PATH or _READ_FLAGS)
        except (FileNotFoundError, NotADirectoryError):
            raise FileNotFoundError(f"no such directory: {path!r}") from None
        try:
            if not stat.S_ISDIR(os.fstat(fd).st_mode):
                raise NotADirectoryError(f"{path!r} is a file, not a directory; use read_file to read it")
            listing = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=fd)
        finally:
            os.close(fd)
        try:
            with os.scandir(listing) as scan:
                entries = [_entry_info(entry.name, listing) for entry in scan]
        finally:
            os.close(listing)
        return sorted(entries, key=lambda e: e["name"])

    def read_file(path: str, start_line: int = 1, max_lines: int | None = None) -> str:
        """Read a text file in the workspace as UTF-8 (undecodable bytes become U+FFFD).

        Args:
            path: File to read, relative to the workspace root.
            start_line: First line to return, counting from 1.
            max_lines: How many lines to return at most (default: all, up to 1,000,000 characters).

        Returns:
            The file's text from start_line on, line endings kept as they are; "" for an empty file. Text
            cut at the character limit ends with a line saying so.
        """
        if start_line < 1:
            raise ValueError(f"start_line must be 1 or more, got {start_line}")
        if max_lines is not None and max_lines < 1:
            raise ValueError(f"max_lines must be 1 or more, got {max_lines}")
        fd = _open_existing_file(ws, path)
        # One descriptor for the binary check and the read: the file cannot be swapped in between.
        with open(fd, encoding="utf-8-sig", errors="replace", newline="") as text:
            if b"\x00" in os.pread(fd, _BINARY_SNIFF_BYTES, 0):
                size = os.fstat(fd).st_size
                raise ValueError(
                    f"{path!r} looks like a binary file ({size} bytes); read_file only reads text"
                )
            return _read_lines(text, path, start_line, max_lines)

    def write_file(path: str, content: str, append: bool = False) -> str:
        """Write text to a file in the workspace as UTF-8, creating missing parent directories.

        Args:
            path: File to write, relative to the workspace root.
            content: The text to write, exactly as given (no newline is added).
            append: Add to the end of the file instead of replacing it.

        Returns:
            A confirmation such as "wrote 12 bytes to notes/a.txt" (or "appended 12 bytes to ...").
        """
        data = content.encode("utf-8")
        fd, target = ws.open_for_writing(path, append=append)
        with open(fd, "ab" if append else "wb") as out:
            out.write(data)
        return f"{'appended' if append else 'wrote'} {len(data)} bytes to {ws.relative(target)}"

    return [list_dir, read_file, write_file]


def _entry_info(name: str, dir_fd: int) -> dict[str, Any]:
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:  # removed while listing
        return {"name": name, "type": "other", "size": None}
    if stat.S_ISLNK(info.st_mode):
        kind = "symlink"
    elif stat.S_ISDIR(info.st_mode):
        kind = "dir"
    elif stat.S_ISREG(info.st_mode):
        kind = "file"
    else:
        kind = "other"
    return {"name": name, "type": kind, "size": info.st_size if kind == "file" else None}


def _open_existing_file(ws: Workspace, path: str) -> int:
    """A read-only descriptor of the regular file `path` in the workspace."""
    try:
        fd, _ = ws.open(path, _READ_FLAGS)
    except (FileNotFoundError, NotADirectoryError):
        raise FileNotFoundError(
            f"no such file: {path!r} (paths are relative to the workspace root)"
        ) from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(f"{path!r} is a directory; use list_dir to see what is in it")
        if not stat.S_ISREG(mode):
            raise ValueError(f"{path!r} is not a regular file; read_file only reads text files")
        os.set_blocking(fd, True)  # O_NONBLOCK only kept a FIFO from blocking the open
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_lines(text: TextIO, shown: str, start_line: int, max_lines: int | None) -> str:
    parts: list[str] = []
    chars = taken = 0
    number = 0  # the line the last piece read belongs to
    at_line_start = True
    # readline(limit) keeps one enormous line (minified JSON, say) from being read whole into memory.
    while piece := text.readline(READ_MAX_CHARS + 1):
        number += at_line_start
        at_line_start = piece.endswith(("\n", "\r"))
        if number < start_line:
            continue
        if max_lines is not None and taken >= max_lines:
            break
        room = READ_MAX_CHARS - chars
        if len(piece) > room:
            parts.append(piece[:room])
            parts.append(f"\n[... stopped at {READ_MAX_CHARS} characters, in line {number}]")
            break
        parts.append(piece)
        chars += len(piece)
        taken += at_line_start
    if number < start_line and start_line > 1:
        raise ValueError(f"start_line {start_line} is past the end of {shown!r} ({number} lines)")
    return "".join(parts)


# ---------------------------------------------------------------- shell


def _shell_function(ws: Workspace, shell_timeout: float, allow_env: bool = False) -> Callable[..., Any]:
    def run_shell(command: str, timeout: float | None = None) -> dict:
        from toolmode.sandbox.shell import (
            run_confined,
        )  # imported on use: the sandbox is heavier than the tools

        if not command.strip():
            raise ValueError("command is empty")
        limit = shell_timeout if timeout is None else timeout
        if limit <= 0:
            raise ValueError(f"timeout must be positive, got {timeout}")
        result = run_confined(
            command, workspace=ws.root, timeout=cap_timeout(min(limit, shell_timeout)), max_output=SHELL_MAX_OUTPUT,
            allow_env_in_workspace=allow_env, policy=_shell_policy(_run_sandbox_policy()),
        )
        return {
            "exit_code": result.exit_code,
            "stdout": result.stdout,
            "stderr": result.stderr,
            "timed_out": result.timed_out,
        }

    run_shell.__doc__ = f"""Run a command with /bin/sh in the workspace directory, in a sandbox.

        The sandbox allows writing only inside the workspace, has no network access and a minimal
        environment (no API keys). Output beyond {SHELL_MAX_OUTPUT} bytes per stream is cut, with a note
        saying how much.

        Args:
            command: The shell command line, e.g. "wc -l *.txt".
            timeout: Seconds before the command is killed (default and maximum: {shell_timeout:g}).

        Returns:
            A dict {{"exit_code": int, "stdout": str, "stderr": str, "timed_out": bool}}; a killed command has
            timed_out true and whatever output it produced until then.
        """

    def sandbox_note(policy: str | None = None) -> str:
        from toolmode.sandbox.shell import describe_tier

        return describe_tier(_shell_policy(policy))

    setattr(run_shell, "sandbox_note", sandbox_note)  # noqa: B010  # the modes print it at the start of a run
    return run_shell


def _run_sandbox_policy() -> str | None:
    """The sandbox policy of the run this call belongs to (its mode's `sandbox_policy`), or None."""
    mode = getattr(getattr(current_run(), "run", None), "mode", None)
    return getattr(mode, "sandbox_policy", None)


def _shell_policy(policy: str | None) -> str | None:
    """The tier policy for a command: the Agent's, so a forced tier that cannot be built refuses the command
    (fail closed) as it refuses run_code; "none" (unconfined code, on request) still confines commands: the
    default chooser."""
    return None if policy in (None, "none") else policy


# ---------------------------------------------------------------- web


_ACCESS = {
    False: "Only public internet addresses are allowed.",
    True: "Private network addresses are allowed.",
}


def _access(policy: NetPolicy) -> str:
    """What fetch_url may reach, for its description."""
    if policy.allow_private_network or not policy.allow_hosts:
        return _ACCESS[policy.allow_private_network]
    hosts = ", ".join(sorted(host if port is None else f"{host}:{port}" for host, port in policy.allow_hosts))
    return f"Only public internet addresses and {hosts} are allowed."


def _fetch_function(policy: NetPolicy, fetch_timeout: float, fetch_max_bytes: int) -> Callable[..., Any]:
    def fetch_url(url: str, max_chars: int = 20000) -> dict:
        if max_chars < 1:
            raise ValueError(f"max_chars must be 1 or more, got {max_chars}")
        left = remaining_time()  # called from sandboxed code: never past that run's deadline
        timeout = cap_timeout(fetch_timeout if left is None else max(0.001, min(fetch_timeout, left)))
        with guarded_get(url, policy=policy, timeout=timeout) as response:
            content_type = response.content_type
            if html_text.content_kind(content_type) == "binary":
                raise ValueError(
                    f"refused: {response.url} is binary content ({content_type}); fetch_url reads text"
                )
            body, cut = response.read(fetch_max_bytes)
        if html_text.content_kind(content_type) == "unknown" and html_text.looks_binary(body):
            raise ValueError(f"refused: {response.url} is binary content; fetch_url reads text")
        text = html_text.decode_text(body, response.charset)
        title, links = None, []
        if html_text.is_html(content_type, text):
            links = html_text.html_links(text, response.url)
            title, text = html_text.html_to_text(text)
        if len(text) > max_chars:
            more = f"{'at least ' if cut else ''}{len(text) - max_chars} more characters"
            text = text[:max_chars] + f"\n[... cut: {more}; raise max_chars to see them]"
        elif cut:
            text += (
                f"\n[... stopped reading after {fetch_max_bytes} bytes; the rest of the page is not shown]"
            )
        return {
            "status": response.status,
            "url": response.url,
            "content_type": content_type,
            "title": title,
            "text": text,
            "links": links,
        }

    fetch_url.__doc__ = f"""Fetch a web page (http or https, GET) and return it as readable text.

        HTML is converted to plain text (scripts and styles dropped, link text kept); other text types
        are returned as they are; binary content (images, PDFs, archives) is refused. Redirects are
        followed (at most 5). {_access(policy)} The fetch gives up after
        {fetch_timeout:g} seconds and reads at most {fetch_max_bytes} bytes.

        Args:
            url: The http:// or https:// URL to fetch.
            max_chars: Longest text to return; longer text is cut and ends with a line saying how much was cut.

        Returns:
            A dict {{"status": int, "url": str (the final URL after redirects), "content_type": str (e.g.
            "text/html", "" if the server sent none), "title": str | None (the HTML <title>), "text": str,
            "links": [{{"text": str, "url": str (absolute)}}, ...] (the page's links, at most 100; [] if not HTML)}}.
            Error statuses such as 404 are returned like any other, with the page's text.
        """
    return fetch_url


# ---------------------------------------------------------------- time

_CITY_ALIASES = {
    "Asia/Shanghai": "beijing 北京 上海 shenzhen 深圳 guangzhou 广州 hangzhou 杭州 chengdu 成都 china 中国 北京时间",
    "Asia/Hong_Kong": "香港 hongkong",
    "Asia/Taipei": "台北",
    "Asia/Tokyo": "东京 東京 japan 日本",
    "Asia/Seoul": "首尔 korea 韩国",
    "Asia/Singapore": "新加坡",
    "Asia/Kolkata": "mumbai 孟买 delhi newdelhi 新德里 india 印度",
    "Asia/Dubai": "迪拜",
    "Europe/London": "伦敦 uk 英国",
    "Europe/Paris": "巴黎 france 法国",
    "Europe/Berlin": "柏林 germany 德国",
    "Europe/Moscow": "莫斯科",
    "America/New_York": "纽约 newyorkcity nyc washington 华盛顿 boston",
    "America/Chicago": "芝加哥",
    "America/Los_Angeles": "洛杉矶 la sanfrancisco 旧金山 seattle 西雅图",
    "Australia/Sydney": "悉尼",
    "UTC": "gmt z 协调世界时",
}
_OFFSET = re.compile(r"^(?:utc|gmt)?\s*([+-])\s*(\d{1,2})(?::?(\d{2}))?$")


def _now() -> datetime:
    """The current UTC time (a seam for tests)."""
    return datetime.now(UTC)


def current_time(timezone: str = "UTC") -> dict:
    """The current date and time in a timezone.

    Args:
        timezone: An IANA name such as "Asia/Shanghai" or "America/New_York" (any letter case), a UTC
            offset such as "UTC+8" or "+05:30", or a city or country from a small built-in table of
            common names, in English or Chinese (e.g. "Beijing", "北京", "Tokyo", "东京", "New York",
            "纽约", "London", "伦敦"); the city part of any IANA name also works ("Berlin", "Sydney").

    Returns:
        A dict {"timezone": str (the IANA name or offset used), "iso": str (ISO 8601 with offset, to the second),
        "date": "YYYY-MM-DD", "time": "HH:MM:SS", "weekday": str (e.g. "Monday"), "utc_offset": "+08:00"}.
    """
    name, zone = _find_zone(timezone)
    now = _now().astimezone(zone).replace(microsecond=0)
    offset = now.strftime("%z")
    return {
        "timezone": name,
        "iso": now.isoformat(),
        "date": now.strftime("%Y-%m-%d"),
        "time": now.strftime("%H:%M:%S"),
        "weekday": now.strftime("%A"),
        "utc_offset": f"{offset[:3]}:{offset[3:]}",
    }


def _find_zone(text: str) -> tuple[str, tzinfo]:
    key = _normalise(text)
    offset = _OFFSET.match(text.strip().lower())
    if offset:
        sign, hours, minutes = offset.group(1), int(offset.group(2)), int(offset.group(3) or 0)
        if hours > 14 or minutes >= 60:
            raise ValueError(f"invalid UTC offset {text!r}: offsets run from -12:00 to +14:00")
        delta = timedelta(hours=hours, minutes=minutes) * (-1 if sign == "-" else 1)
        name = f"UTC{sign}{hours:02d}:{minutes:02d}"
        return name, timezone(delta, name)
    zone = _zone_index().get(key)
    if zone is None:
        close = difflib.get_close_matches(key, _zone_index(), n=3, cutoff=0.75)
        hint = f" Did you mean {', '.join(repr(_zone_index()[c]) for c in close)}?" if close else ""
        raise ValueError(
            f"unknown timezone {text!r}: use an IANA name such as 'Asia/Shanghai' or 'America/New_York', "
            f"a UTC offset such as 'UTC+8', or a city such as 'Beijing'.{hint}"
        )
    return zone, zoneinfo.ZoneInfo(zone)


def _normalise(text: str) -> str:
    return re.sub(r"[\s_\-]+", "", text.strip().casefold())


@cache
def _zone_index() -> dict[str, str]:
    """Normalised name -> IANA name: full IANA names, unambiguous city parts, then the alias table."""
    names = zoneinfo.available_timezones()
    index: dict[str, str] = {}
    cities: dict[str, set[str]] = {}
    for name in names:
        index[_normalise(name)] = name
        cities.setdefault(_normalise(name.rsplit("/", 1)[-1]), set()).add(name)
    for city, matches in cities.items():
        if len(matches) == 1 and city not in index:
            index[city] = next(iter(matches))
    for name, aliases in _CITY_ALIASES.items():
        for alias in aliases.split():
            index[_normalise(alias)] = name
    return index
