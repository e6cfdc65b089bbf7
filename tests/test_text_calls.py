"""Recovery of tool calls that small models write as text (JSON blocks, <tool_call> tags, fenced Python)."""

from __future__ import annotations

import json

import pytest

from toolmode.models.text_calls import recover_code_call, recover_json_calls

NAMES = {"read_file", "list_dir"}
READ_A = '{"name": "read_file", "arguments": {"path": "a.txt"}}'


def _pairs(content: str | None) -> list[tuple[str, dict]]:
    return [(c.name, json.loads(c.arguments)) for c in recover_json_calls(content, NAMES)]


@pytest.mark.parametrize(
    "content",
    [
        f"```json\n{READ_A}\n```",
        f"```JSON\n{READ_A}\n```",
        f"```\n{READ_A}\n```",
        f"Sure, let me read it.\n\n```json\n{READ_A}\n```\nThen I will count.",
        f"<tool_call>\n{READ_A}\n</tool_call>",
        READ_A,
        f"  {READ_A}\n",
        '```json\n{"function": {"name": "read_file", "arguments": "{\\"path\\": \\"a.txt\\"}"}}\n```',
        '```json\n{"name": "read_file", "parameters": {"path": "a.txt"}}\n```',
        '```tool_call\n{"tool": "read_file", "arguments": {"path": "a.txt"}}\n```',
    ],
    ids=["json", "JSON", "bare-fence", "in-prose", "qwen-tags", "whole-reply", "whitespace", "wire-form",
         "parameters-key", "tool-key"],
)
def test_one_call_is_recovered(content: str) -> None:
    assert _pairs(content) == [("read_file", {"path": "a.txt"})]


def test_several_calls_as_a_list_or_one_per_line() -> None:
    expected = [("read_file", {"path": "a.txt"}), ("list_dir", {})]
    listed = f'```json\n[{READ_A}, {{"name": "list_dir", "arguments": {{}}}}]\n```'
    per_line = f'```json\n{READ_A}\n{{"name": "list_dir", "arguments": {{}}}}\n```'
    two_blocks = f'```json\n{READ_A}\n```\nand\n```json\n{{"name": "list_dir", "arguments": {{}}}}\n```'
    for content in (listed, per_line, two_blocks):
        assert _pairs(content) == expected
    ids = [c.id for c in recover_json_calls(listed, NAMES)]
    assert len(set(ids)) == 2


def test_missing_arguments_means_no_arguments() -> None:
    assert _pairs('```json\n{"name": "list_dir"}\n```') == [("list_dir", {})]


def test_non_ascii_arguments_survive() -> None:
    content = '```json\n{"name": "read_file", "arguments": {"path": "日志/错误.txt"}}\n```'
    assert _pairs(content) == [("read_file", {"path": "日志/错误.txt"})]


@pytest.mark.parametrize(
    "content",
    [
        None,
        "",
        "The answer is 42.",
        '```json\n{"name": "delete_everything", "arguments": {}}\n```',  # unknown tool
        '```json\n{"name": "read_file", "arguments": {"path": "a.txt"\n```',  # broken JSON
        f"```python\n{READ_A}\n```",  # not a JSON fence
        '```json\n{"answer": 42}\n```',  # JSON, but not a call
        '```json\n[1, 2, 3]\n```',
        f"Text before {READ_A} text after",  # not fenced, not the whole reply
    ],
    ids=["none", "empty", "prose", "unknown-tool", "broken-json", "python-fence", "not-a-call", "list",
         "inline"],
)
def test_nothing_is_recovered(content: str | None) -> None:
    assert recover_json_calls(content, NAMES) == []


def test_only_known_tools_among_several() -> None:
    content = f'```json\n[{{"name": "rm", "arguments": {{}}}}, {READ_A}]\n```'
    assert _pairs(content) == [("read_file", {"path": "a.txt"})]


def test_one_line_fence_is_recovered() -> None:
    assert _pairs(f"```json {READ_A}```") == [("read_file", {"path": "a.txt"})]


def test_crlf_fence_is_recovered() -> None:
    assert _pairs(f"```json\r\n{READ_A}\r\n```") == [("read_file", {"path": "a.txt"})]


def test_null_arguments_become_an_empty_object() -> None:
    assert _pairs('```json\n{"name": "list_dir", "arguments": null}\n```') == [("list_dir", {})]


# ----------------------------------------------------------------------------- fenced Python -> run_code


@pytest.mark.parametrize("lang", ["python", "py", "python3", "Python"])
def test_one_python_block_becomes_run_code(lang: str) -> None:
    content = f"Run this:\n```{lang}\nimport os\nprint(os.listdir('.'))\n```\nIt lists files."
    [c] = recover_code_call(content)
    assert c.name == "run_code"
    assert json.loads(c.arguments) == {"code": "import os\nprint(os.listdir('.'))\n"}


@pytest.mark.parametrize(
    "content",
    [
        None,
        "no code here",
        "```python\n   \n```",  # empty block
        "```python\nx = 1\n```\nand\n```python\nprint(x)\n```",  # two blocks: ambiguous
        "```json\n{}\n```",
        "```bash\nls\n```",
    ],
    ids=["none", "prose", "empty", "two-blocks", "json", "bash"],
)
def test_no_code_call(content: str | None) -> None:
    assert recover_code_call(content) == []


def test_code_call_tool_name_can_be_changed() -> None:
    [c] = recover_code_call("```python\nprint(1)\n```", code_tool="execute")
    assert c.name == "execute"
