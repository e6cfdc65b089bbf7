"""Load the MetaTool tool-retrieval data (tools as `Tool`s, queries with gold tool names) and split it."""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolmode.tools.base import Tool

DEFAULT_DIR = Path(__file__).resolve().parents[2] / "shared" / "data" / "tool-retrieval" / "metatool"


@dataclass(frozen=True)
class Query:
    """A query and the names of the tools that answer it."""

    text: str
    gold: tuple[str, ...]


def _noop(**_: Any) -> None:
    return None


def make_tool(name: str, description: str, properties: dict[str, Any] | None = None) -> Tool:
    """A tool with no callable behaviour, for ranking only."""
    schema = {"type": "object", "properties": properties or {}}
    return Tool(name=name, description=description, parameters=schema, fn=_noop)


def _jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def load_tools(data_dir: Path = DEFAULT_DIR) -> list[Tool]:
    """The 199 MetaTool tools (name and description only; MetaTool has no parameters)."""
    return [make_tool(r["name"], r["description"]) for r in _jsonl(data_dir / "tools.jsonl")]


def load_queries(data_dir: Path = DEFAULT_DIR, *, multi: bool = False) -> list[Query]:
    """Single-tool queries (`queries.jsonl`) or the two-tool ones (`queries_multi.jsonl`)."""
    name = "queries_multi.jsonl" if multi else "queries.jsonl"
    return [Query(r["query"], tuple(r["gold"])) for r in _jsonl(data_dir / name)]


def split(queries: list[Query]) -> tuple[list[Query], list[Query]]:
    """(tune, test) halves, decided by a hash of the query text so the split never changes."""
    tune: list[Query] = []
    test: list[Query] = []
    for q in queries:
        (tune if hashlib.sha1(q.text.encode()).digest()[0] % 2 == 0 else test).append(q)
    return tune, test


_VERBS = ["get", "fetch", "list", "create", "update", "search", "check", "find", "send", "track"]
_NOUNS = ["report", "record", "item", "account", "event", "entry", "profile", "order", "message", "asset"]
_PARAMS = [
    ("query", "Free-text search terms."),
    ("limit", "Maximum number of results."),
    ("region", "Region or country code."),
    ("date", "Date in ISO format."),
    ("user_id", "Identifier of the user."),
    ("format", "Output format, json or text."),
]


def synthetic_catalog(base: list[Tool], size: int, seed: int = 0) -> list[Tool]:
    """A deterministic catalog of `size` tools made by recombining `base` tools' names and descriptions.

    Each tool takes one base description, a sentence of another, a verb-noun name prefix and one or two
    parameters, so term statistics look like a large real catalog rather than 50 copies of the same text.
    """
    rng = random.Random(seed)
    sentences = [s.strip() for t in base for s in t.description.split(".") if len(s.strip()) > 10]
    out = []
    for i in range(size):
        a = base[i % len(base)]
        verb, noun = rng.choice(_VERBS), rng.choice(_NOUNS)
        name = f"{a.name}_{verb}{noun.capitalize()}{i}"
        desc = f"{a.description} Can also {verb} {noun}s. {rng.choice(sentences)}."
        props = {p: {"type": "string", "description": d} for p, d in rng.sample(_PARAMS, rng.randint(1, 2))}
        out.append(make_tool(name, desc, props))
    return out
