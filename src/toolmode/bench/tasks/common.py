"""Helpers shared by the built-in tasks: seeded randomness, builtin tools, answer matching."""

from __future__ import annotations

import random
import re
from urllib.parse import urlsplit

from toolmode.bench.parse import normalize
from toolmode.bench.task import TaskEnv
from toolmode.tools.base import Tool

BUILTIN_NAMES = [
    "list_dir",
    "read_file",
    "write_file",
    "run_shell",
    "fetch_url",
    "current_time",
    "calculator",
]


def rng(task: str, seed: int) -> random.Random:
    """A random generator that depends only on the task name and the seed."""
    return random.Random(f"{task}:{seed}")


def builtins(env: TaskEnv) -> list[Tool]:
    """The builtin tools confined to the episode's workspace; fetch_url may reach the episode's own fixture
    server (its host:port only: no other loopback or private service of the host) and public addresses."""
    from toolmode.tools.builtin import builtin_tools

    return builtin_tools(env.workspace, allow_hosts=fixture_hosts(env))


def fixture_hosts(env: TaskEnv) -> list[str]:
    """`host:port` of the episode's fixture server, or nothing when the task serves no pages."""
    if not env.base_url:
        return []
    parts = urlsplit(env.base_url)
    return [f"{parts.hostname}:{parts.port}"]


def hide_builtins_except(*needed: str) -> list[str]:
    """Builtin tool names a task does not need: hidden in search variants."""
    return [n for n in BUILTIN_NAMES if n not in needed]


def first_after(answer: str, markers: list[str], candidates: list[str]) -> str | None:
    """The first candidate named after the last marker (e.g. "most", "最多") in the answer.

    Used to find which file/store/person the answer singles out, when the answer also lists all of them.
    """
    text = normalize(answer)
    cut = -1
    for marker in markers:
        word = normalize(marker)
        pattern = rf"\b{re.escape(word)}\b" if word.isascii() else re.escape(word)
        for m in re.finditer(pattern, text):
            cut = max(cut, m.start())
    if cut < 0:
        return None
    tail = text[cut:]
    best: tuple[int, str] | None = None
    for cand in candidates:
        hit = re.search(re.escape(normalize(cand)) + r"(?![A-Za-z0-9_]|\.[A-Za-z0-9_])", tail)
        if hit and (best is None or hit.start() < best[0]):
            best = (m.start(), cand)
    return best[1] if best else None


MOST = ["most", "highest", "largest", "max", "top", "最多", "最高", "最大"]
