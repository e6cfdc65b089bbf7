"""No credential reaches a file the host writes (traces, bench files, reports): each shape is redacted.

The files are read back from disk, as the model's code in the workspace would read them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from toolmode import Agent, hostfiles, tool
from toolmode.events import Notice
from toolmode.redact import REDACTED, redact, remember
from toolmode.testing import ScriptedModelServer, call, reply
from toolmode.trace import JsonlSink

# (what is written, the secret part that must not survive, what must stay)
SHAPES = [
    ("https://alice:sk-a1b2c3d4e5f6g7h8i9j0@api.example.com/v1", "sk-a1b2c3d4e5f6g7h8i9j0", "@api.example.com/v1"),
    ("http://token-only-0123456789abcdef@127.0.0.1:8080/v1", "token-only-0123456789abcdef", "127.0.0.1:8080/v1"),
    ('{"Authorization": "Bearer eyJhbGciOi.payload.sig"}', "eyJhbGciOi.payload.sig", '"Authorization": "Bearer '),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA==", "Authorization: Basic "),
    ("Proxy-Authorization: Bearer abcdefgh12345678", "abcdefgh12345678", "Proxy-Authorization"),
    ('{"api-key": "azure0123456789"}', "azure0123456789", '"api-key": "'),
    ("x-api-key: anthropicvalue99", "anthropicvalue99", "x-api-key: "),
    ("{'api_key': 'python-repr-key-1'}", "python-repr-key-1", "'api_key': '"),
    ("curl -H 'bearer zzzzzzzzzzzz1'", "zzzzzzzzzzzz1", "curl -H"),
    ("the key is sk-proj-AbCdEfGhIjKlMnOpQrSt, keep it", "sk-proj-AbCdEfGhIjKlMnOpQrSt", "keep it"),
    ("sk-or-v1-0123456789abcdef0123", "sk-or-v1-0123456789abcdef0123", ""),
    ("ghp_0123456789abcdefghij0123456789abcdef", "ghp_0123456789abcdefghij0123456789abcdef", ""),
    ("AKIAIOSFODNN7EXAMPLE is an id", "AKIAIOSFODNN7EXAMPLE", "is an id"),
    ("AIzaSyA-0123456789abcdefghijklmnopqrstu", "AIzaSyA-0123456789abcdefghijklmnopqrstu", ""),
    ("hf_abcdefghijklmnopqrstuvwxyz0123", "hf_abcdefghijklmnopqrstuvwxyz0123", ""),
]
KEEP = ["http://127.0.0.1:8080/v1", "disk-usage: 3 files", "max_tokens=100 api_key_env=DEEPSEEK_API_KEY",
        "a task-list", "user@example.com", '{"scripted": true, "tasks": "log_stats"}']


@pytest.mark.parametrize(("text", "secret", "kept"), SHAPES, ids=[s[0][:24] for s in SHAPES])
def test_each_credential_shape_is_redacted(text: str, secret: str, kept: str) -> None:
    out = redact(text)
    assert secret not in out and REDACTED in out and kept in out


@pytest.mark.parametrize("text", KEEP)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text) == text


def test_the_values_of_key_variables_in_use_are_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "plain-looking-deepseek-value-1")
    monkeypatch.setenv("MY_SERVICE_TOKEN", "another.plain.value.42")
    monkeypatch.setenv("HOME_DIR_NAME", "not-a-secret-at-all-long")
    remember("given-to-a-client-as-api_key-99")
    out = redact("a plain-looking-deepseek-value-1 b another.plain.value.42 c given-to-a-client-as-api_key-99 "
                 "d not-a-secret-at-all-long")
    assert out == f"a {REDACTED} b {REDACTED} c {REDACTED} d not-a-secret-at-all-long"


def test_redacted_json_stays_json() -> None:
    record = {"url": SHAPES[0][0], "headers": {"Authorization": "Bearer abcdefgh12345678"}, "note": SHAPES[9][0]}
    back = json.loads(redact(json.dumps(record)))
    assert back["headers"]["Authorization"] == f"Bearer {REDACTED}" and "sk-" not in json.dumps(back)


def test_every_host_writer_redacts(tmp_path: Path) -> None:
    secret = SHAPES[0][0]
    hostfiles.write_text(tmp_path / "a.txt", f"settings {secret}\n")
    hostfiles.append_text(tmp_path / "b.jsonl", json.dumps({"error": f"cannot reach {secret}"}) + "\n")
    sink = JsonlSink(tmp_path / "trace.jsonl")
    sink.emit(Notice(f"cannot reach {secret}"))
    sink.close()
    for name in ("a.txt", "b.jsonl", "trace.jsonl"):
        text = (tmp_path / name).read_text()
        assert SHAPES[0][1] not in text and "[REDACTED]@api.example.com" in text, name


@tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


def test_a_runs_trace_holds_no_key_of_its_endpoint_or_of_its_tools(
    scripted: Callable[..., ScriptedModelServer], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The live trace of a run whose base URL carries a key, and a tool result that quotes the key."""
    key = "sk-live-trace-secret-0123456789"
    server = scripted([call("echo", text=f"my key is {key}"), reply(f"Done; the key was {key}.")])
    url = server.base_url.replace("http://", f"http://me:{key}@")
    with Agent(tools=[echo], mode="react", model="m", base_url=url, api_key="not-a-long-key", console=False,
               runs_dir=tmp_path / "runs") as agent:
        result = agent.run("echo the key")
    text = Path(result.trace_path).read_text()
    assert key not in text and f"me:{key}" not in text
    assert text.count(REDACTED) >= 4  # run_start's URL, the call, its result and the answer


def test_redaction_is_linear_in_the_text() -> None:
    """Patterns run over model- and web-controlled text: near-misses of every shape cost what plain text costs."""
    size = 200_000
    plain = "a" * size
    near_misses = ("a://" + "b" * 40 + "/ " + "authorization: x " + "Bearer short " + "sk-short " +
                   "aaaa.aaaa.aaaa " * 4)
    hostile = (near_misses * (size // len(near_misses) + 1))[:size]

    def cost(text: str) -> float:
        best = float("inf")
        for _ in range(3):
            started = time.thread_time()
            redact(text)
            best = min(best, time.thread_time() - started)
        return max(best, 1e-4)

    assert cost(hostile) / cost(plain + " " + plain[: size // 2]) < 50
