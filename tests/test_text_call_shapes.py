"""The shapes small local models write calls in, what must never be taken for a call, and lenient JSON."""

from __future__ import annotations

import json

import pytest

from toolmode.models.lenient_json import LenientError, loads_lenient
from toolmode.models.text_calls import Tools, find_text_calls, functions_in_description

REACT = Tools({"read_file": ["path"], "list_dir": ["path"], "current_time": ["city"]})
CODE = Tools({"run_code": ["code"]}, {"current_time": ["city"], "read_file": ["path"], "list_dir": ["path"]})


def pairs(content: str, tools: Tools = REACT, **kw) -> list[tuple[str, dict]]:
    return [(c.name, json.loads(c.arguments)) for c in find_text_calls(content, tools, **kw).calls]


# ----------------------------------------------------------------------------- lenient JSON


def test_triple_quoted_code_keeps_its_backslashes() -> None:
    text = '{"name": "run_code", "arguments": {"code": """\nfor line in open("a").read().split("\\n"):\n    print(line)\n"""}}'
    value = loads_lenient(text)
    assert value["arguments"]["code"] == '\nfor line in open("a").read().split("\\n"):\n    print(line)\n'


@pytest.mark.parametrize(
    "text, value",
    [
        ("{'a': 'x', 'b': [1, 2,],}", {"a": "x", "b": [1, 2]}),
        ('{"a": true, "b": null, "c": False, "d": None}', {"a": True, "b": None, "c": False, "d": None}),
        ('{"a": "line one\nline two"}', {"a": "line one\nline two"}),  # a raw newline inside a string
        ('{"n": -3, "f": 1.5}', {"n": -3, "f": 1.5}),
        ("{'a': 'x' 'y'}", {"a": "xy"}),  # implicit concatenation
    ],
    ids=["single-quotes-trailing-commas", "python-constants", "raw-newline", "numbers", "concatenation"],
)
def test_python_style_literals_are_read(text: str, value: object) -> None:
    assert loads_lenient(text) == value


@pytest.mark.parametrize(
    "text",
    [
        "{'a': __import__('os').system('touch /tmp/pwned')}",
        "{'a': open('/etc/passwd').read()}",
        "{'a': 1 + 2}",
        "{**x}",
        "{1: 'a'}",
        "{'a': b'bytes'}",
        "[x for x in range(3)]",
        "not json at all",
    ],
)
def test_anything_but_literals_is_refused(text: str) -> None:
    with pytest.raises(LenientError):
        loads_lenient(text)


def test_miscounted_closing_braces_are_forgiven() -> None:
    assert loads_lenient('{"a": {"b": """x"""}}}') == {"a": {"b": "x"}}
    with pytest.raises(LenientError):
        loads_lenient('{"a": {"b": "x"}')  # a missing brace may mean a cut reply: not guessed
    with pytest.raises(LenientError):
        loads_lenient('{"a": {"b": "x"}}}}}')  # more than two off is not a call any more


def test_deep_nesting_is_refused_not_crashing() -> None:
    with pytest.raises(LenientError):
        loads_lenient("[" * 5000 + "]" * 5000 + " x")


# ----------------------------------------------------------------------------- shapes that are calls


@pytest.mark.parametrize(
    "content",
    [
        "```json\n{'name': 'read_file', 'arguments': {'path': 'a.txt',},}\n```",
        '{"tool": "read_file", "args": {"path": "a.txt"}}',
        '{"function": "read_file", "parameters": {"path": "a.txt"}}',
        '{"read_file": {"path": "a.txt"}}',
        '<tool_call>\n{"name": "read_file", "arguments": {"path": "a.txt"}}',  # the closing tag never came
        '<tool_call>\n```json\n{"name": "read_file", "arguments": {"path": "a.txt"}}\n```\n</tool_call>',
        'I will read the file.\n{"name": "read_file", "arguments": {"path": "a.txt"}}',
        'read_file("a.txt")',
        "read_file(path='a.txt')",
        "```python\nread_file('a.txt')\n```",
        'read_file("a.txt")\nThis will show me the file.',
        '{"name": "read_file", "arguments": "{\'path\': \'a.txt\'}"}',
    ],
    ids=["python-dict", "tool-args", "function-parameters", "name-as-key", "unclosed-tag", "fence-in-tag",
         "prose-then-json", "py-positional", "py-keyword", "py-fence", "py-then-prose", "string-arguments"],
)
def test_one_call_in_many_shapes(content: str) -> None:
    assert pairs(content) == [("read_file", {"path": "a.txt"})]


def test_several_calls_in_one_reply() -> None:
    tags = ('<tool_call>{"name": "list_dir", "arguments": {"path": "logs"}}</tool_call>\n'
            '<tool_call>{"name": "read_file", "arguments": {"path": "a.txt"}}</tool_call>')
    python = 'list_dir("logs")\nread_file("a.txt")'
    objects = '{"name": "list_dir", "arguments": {"path": "logs"}}\n{"name": "read_file", "arguments": {"path": "a.txt"}}'
    for content in (tags, python, objects):
        assert pairs(content) == [("list_dir", {"path": "logs"}), ("read_file", {"path": "a.txt"})]


def test_run_code_call_with_triple_quoted_program() -> None:
    content = ('```json\n{"name": "run_code", "arguments": {"code": """\nimport os\nfor f in os.listdir("logs"):\n'
               '    print(f)\n"""}}\n```')
    [(name, args)] = pairs(content, CODE)
    assert name == "run_code" and "for f in os.listdir(\"logs\"):\n    print(f)" in args["code"]


def test_run_code_in_python_call_syntax() -> None:
    content = 'run_code(code="""\nprint(list_dir(\'logs\'))\n""")'
    assert pairs(content, CODE) == [("run_code", {"code": "\nprint(list_dir('logs'))\n"})]


@pytest.mark.parametrize(
    "body",
    [
        '{"name": "run_code", "arguments": {"code": "x = {\'a\': 1}\\nprint(x["a"])"}}',  # unescaped quotes
        '{"name": "run_code", "arguments": {"code": "x = {\'a\': 1}\\nprint(x[\'a\'])\n  }\n}',  # no closing quote
        '{"name": "run_code", "arguments": {"code": "x = {\'a\': 1}\\nprint(x[\'a\'])\n',  # nothing closed
    ],
    ids=["unescaped-quotes", "unclosed-string", "unclosed-everything"],
)
def test_a_loose_single_string_call_is_repaired(body: str) -> None:
    found = find_text_calls(f"```json\n{body}\n```", CODE)
    [call] = found.calls
    assert call.recovered == "json-repaired"
    code = json.loads(call.arguments)["code"]
    assert code.startswith("x = {'a': 1}\nprint(x[") and code.rstrip().endswith("])")


def test_several_objects_are_never_repaired_into_one_program() -> None:
    # Recorded from the 0.5B: the same call three times, the last one broken.
    one = '{"name": "run_code", "arguments": {"code": "print(x[\'a\'])"}}'
    found = find_text_calls(f"{one}\n{one}\n{one[:-3]}", CODE)
    assert all("}}" not in json.loads(c.arguments)["code"] for c in found.calls)


def test_a_cut_block_is_never_repaired() -> None:
    cut = '```json\n{"name": "run_code", "arguments": {"code": "print(1)\\nprint(2'  # max tokens hit
    found = find_text_calls(cut, CODE)
    assert found.calls == [] and found.problem is not None


def test_function_that_exists_only_inside_run_code_becomes_a_program() -> None:
    for content in ('{"name": "current_time", "arguments": {"city": "Tokyo"}}', 'current_time("Tokyo")'):
        found = find_text_calls(content, CODE)
        [call] = found.calls
        assert call.name == "run_code"
        assert json.loads(call.arguments) == {"code": "print(current_time(city='Tokyo'))\n"}
        assert call.recovered.endswith("->code")


def test_every_recovered_call_is_marked() -> None:
    found = find_text_calls('list_dir("logs")\nread_file("a.txt")', REACT)
    assert found.kind == "python" and all(c.recovered == "python" for c in found.calls)
    assert len({c.id for c in found.calls}) == 2


def test_python_block_program_prints_its_last_expression() -> None:
    found = find_text_calls("```python\nfiles = list_dir('logs')\nlen(files)  # how many\n```", CODE,
                            code_blocks=True)
    [call] = found.calls
    assert found.kind == "code"
    assert json.loads(call.arguments)["code"] == "files = list_dir('logs')\nprint(len(files))  # how many\n"


def test_code_blocks_are_read_only_when_asked() -> None:
    content = "```python\nx = 1\nprint(x)\n```"
    assert find_text_calls(content, CODE).calls == []
    assert len(find_text_calls(content, CODE, code_blocks=True).calls) == 1


def test_functions_inside_run_code_are_read_from_its_description() -> None:
    description = ("Run Python ... namespace:\nread_file(path: str) -> str - Read a file.\n"
                   "current_time(city: str, fmt: str = '%H:%M') -> str - Time.\n"
                   "search_tools(query: str, k: int = 5) -> list[Handle] - find more")
    assert functions_in_description(description) == {
        "read_file": ["path"], "current_time": ["city", "fmt"], "search_tools": ["query", "k"],
    }


# ----------------------------------------------------------------------------- call-like but unreadable


@pytest.mark.parametrize(
    "content, reason",
    [
        ('```json\n{"name": "read_file", "arguments": {"path": "a.txt"\n```', "not valid JSON"),
        ('{"name": "delete_all", "arguments": {}}', "no tool named 'delete_all'"),
        ("read_file(path=some_variable)", "not a literal"),
        ("<tool_call>\nplease read a.txt\n</tool_call>", "<tool_call>"),
        ('To read it I call {"name": "read_file", "arguments": {"path": "a.txt"}} now.', "inside other text"),
        ('{"name": "read_file", "arguments": [1, 2]}', "must be an object"),
        ("<tools></tools>", "only the markup"),  # the 1.5B's whole reply in one recorded code-mode run
    ],
    ids=["broken-json", "unknown-tool", "variable-argument", "tag-with-prose", "inline", "list-arguments",
         "empty-tools-tag"],
)
def test_call_like_text_that_cannot_be_read_is_a_problem(content: str, reason: str) -> None:
    found = find_text_calls(content, REACT)
    assert found.calls == []
    assert found.problem is not None and reason in found.problem


# ----------------------------------------------------------------------------- answers stay answers


@pytest.mark.parametrize(
    "content",
    [
        "api.log: 40 lines, 3 ERROR\nmost errors: api.log",
        "I used read_file to read a.txt; it has 3 lines.",
        'I called read_file("a.txt") and it has 3 lines.',
        '```json\n{"total": 1234.5, "top_store": "north"}\n```',
        '{"name": "api.log", "errors": 3}',
        '[{"name": "api.log", "lines": 40}, {"name": "auth.log", "lines": 31}]',
        "The files are:\n{\"name\": \"read_file\"} is the tool I used, and the answer is 42.",
        "time: 09:15; title: Daily News",
        "```bash\nls logs\n```",
        "The <tools> section lists read_file; the answer is 3.",
    ],
    ids=["answer", "mentions-tool", "mentions-call-inline", "json-data", "name-key-data", "list-data",
         "name-only-object-with-prose", "time-answer", "bash-fence", "tag-word-in-prose"],
)
def test_prose_and_data_are_neither_calls_nor_problems(content: str) -> None:
    found = find_text_calls(content, REACT)
    assert found.calls == [] and found.problem is None


# ----------------------------------------------------------------------------- a call, then more text


def test_a_call_that_opens_the_reply_runs_and_the_text_after_it_is_dropped() -> None:
    # Recorded from the 1.5B (t03 fixtures): the call, a stray fence, then a guessed answer.
    content = ('{"name": "run_code", "arguments": {"code": "print(1)"}}\n```\n'
               "The file `billing.log` has the most ERROR lines.")
    assert pairs(content, CODE) == [("run_code", {"code": "print(1)"})]


@pytest.mark.parametrize("content", [
    '{"name": "Ada", "age": 3}\n```\nThat is the record.',  # data, not a call
    '{"name": "read_file"}\n```\nno arguments key: a name, not a call',
])
def test_an_opening_object_that_is_not_a_call_stays_text(content: str) -> None:
    assert pairs(content) == []


def test_an_opening_call_to_an_unknown_tool_is_not_run() -> None:
    found = find_text_calls('{"name": "delete_all", "arguments": {}}\n```\nand so on', REACT)
    assert found.calls == [] and "no tool named 'delete_all'" in (found.problem or "")
