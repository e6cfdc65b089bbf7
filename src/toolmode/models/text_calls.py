"""Find tool calls that a model wrote as text instead of as native tool calls.

Shapes seen from small local models (Qwen2.5-Coder 0.5B/1.5B behind llama.cpp), all handled here:
fenced or bare JSON `{"name": ..., "arguments": {...}}`, the name and arguments under other keys (`tool`,
`function`, `parameters`, `args`), JSON with Python-style strings (triple or single quotes, trailing commas),
`<tool_call>` tags (closed or not), Python call syntax `read_file("a.txt")` / `run_code(code="...")`,
several calls in one reply, and one fenced Python program (becomes a `run_code` call).

Only tools that were sent, or functions that exist inside `run_code`, are recovered. Text that looks
like a call but cannot be read is reported as a `problem`, so the loop can ask again instead of taking
it as the answer. Prose that merely mentions a tool, or quotes JSON data, is neither.
"""

from __future__ import annotations

import ast
import json
import re
import uuid
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolmode.bounded import ParseLimitError, check_depth
from toolmode.models.lenient_json import MAX_TEXT, LenientError, Segments, loads_lenient
from toolmode.models.reply import ToolCall

# The language tag counts only when whitespace follows it: "```json {...}```" on one line is valid too.
# Replies are model-controlled: every pattern here runs in time linear in the reply. Possessive runs
# (`*+`) and atomic groups keep a run of spaces from being split between two stars in every way (the
# old fence pattern took minutes on "```" and 2,000 spaces).
_FENCE = re.compile(r"```[ \t]*+(?:([A-Za-z0-9_+-]+)(?=\s)[ \t]*+)?\r?\n?(.*?)```", re.DOTALL)
_OPEN_FENCE = re.compile(r"```[ \t]*+([A-Za-z0-9_+-]*+)[ \t]*+\r?\n(.*)\Z", re.DOTALL)  # cut before its end
_TAG = re.compile(r"<tool_call>\s*+(.*?)(?:</tool_call>|\Z)", re.DOTALL)  # the body's trailing space: stripped
_ONE_STRING = re.compile(
    r'\A\{\s*"(?:name|tool|function)"\s*:\s*"(\w+)"\s*,\s*"(?:arguments|parameters|args)"\s*:\s*\{\s*"(\w+)"\s*:\s*"'
    r'(.*?)(?>"?\s*+\}?\s*+\}?\s*+)\Z', re.DOTALL)
_JSON_ESCAPE = re.compile(r'\\(["\\/bfnrt]|u[0-9a-fA-F]{4})')
_ONLY_TAGS = re.compile(r"(?:</?(?:tools?|tool_calls?|function\w*|functions)\b[^>]*>\s*)+", re.IGNORECASE)
_JSON_LANGS = {"", "json", "json5", "tool_call", "tool", "function", "javascript"}
_PY_LANGS = {"python", "py", "python3"}
NAME_KEYS = ("name", "tool", "tool_name", "function", "function_name")
ARG_KEYS = ("arguments", "parameters", "args", "input", "kwargs", "params")
RUN_CODE = "run_code"
CALL_SHAPE = '{"name": "<tool>", "arguments": {<argument>: <value>}}'


@dataclass
class Tools:
    """What a reply may call: the tools sent (name -> parameter names) and the functions inside run_code."""

    params: dict[str, list[str]]
    code_functions: dict[str, list[str]] = field(default_factory=dict)
    code_tool: str | None = RUN_CODE  # the tool that takes a whole program (the mode says which)

    @classmethod
    def from_schemas(cls, schemas: Sequence[dict[str, Any]], code_tool: str | None = RUN_CODE) -> Tools:
        """From the tool schemas of the request (the functions inside the code tool come from its description)."""
        params: dict[str, list[str]] = {}
        inner: dict[str, list[str]] = {}
        for s in schemas:
            fn = s.get("function") or {}
            name = fn.get("name")
            if not isinstance(name, str):
                continue
            params[name] = list((fn.get("parameters") or {}).get("properties") or {})
            if code_tool and name == code_tool:
                inner = functions_in_description(str(fn.get("description") or ""))
        return cls(params, {n: p for n, p in inner.items() if n not in params}, code_tool)

    def known(self, name: str) -> bool:
        """A tool that was sent or a function inside run_code."""
        return name in self.params or name in self.code_functions


def functions_in_description(description: str) -> dict[str, list[str]]:
    """`name(a, b: int = 1) -> T - doc` lines of run_code's description -> {name: [a, b]}."""
    out: dict[str, list[str]] = {}
    for m in re.finditer(r"^([A-Za-z_]\w*)\(([^)]*)\)", description, flags=re.MULTILINE):
        params = [p.split(":")[0].split("=")[0].strip().lstrip("*") for p in m.group(2).split(",")]
        out[m.group(1)] = [p for p in params if p.isidentifier()]
    return out


@dataclass
class TextCalls:
    """What a reply's text holds: calls (with how they were written), or a problem, or neither."""

    calls: list[ToolCall] = field(default_factory=list)
    kind: str | None = None  # "json", "python", "code"
    problem: str | None = None  # it looks like a call, but this is why it could not be read


def find_text_calls(content: str | None, tools: Tools, *, code_blocks: bool = False) -> TextCalls:
    """The calls written in `content`, or why a call-like reply could not be read.

    `code_blocks`: a reply holding one fenced Python program becomes a `run_code` call (when it was sent).
    """
    if not content or not content.strip() or len(content) > MAX_TEXT:  # a reply that long is not a call
        return TextCalls()
    finder = _Finder(tools)
    json_blocks, py_blocks = _blocks(content)
    for body in json_blocks:
        finder.json_block(body)
    if not json_blocks:
        for body in _bare_objects(content):
            finder.json_block(body, bare=body != _FENCE.sub("", content).strip())
    for body in py_blocks:
        finder.python_calls(body)
    if not json_blocks and not py_blocks and _starts_with_call(content, tools):
        finder.python_calls(content.strip(), whole=True)
    if not finder.calls and content.lstrip().startswith("{"):
        finder.json_block(content.strip(), bare=True)  # a call, then text (often a guessed answer): the call runs
    if finder.calls:
        return TextCalls(finder.calls, finder.kind)
    if code_blocks and tools.code_tool and tools.code_tool in tools.params:
        programs = [b for b in py_blocks if b.strip()]
        if len(programs) == 1:
            return TextCalls([_code_call(_print_last_expression(programs[0]), "code", tools.code_tool)], "code")
    return TextCalls(problem=finder.problem or _call_like(content, tools))


def recover_json_calls(content: str | None, tool_names: Collection[str]) -> list[ToolCall]:
    """Calls written as JSON (fenced, in `<tool_call>` tags, or the whole reply) that name a known tool."""
    tools = Tools({n: [] for n in tool_names})
    if not content or len(content) > MAX_TEXT:
        return []
    finder = _Finder(tools)
    json_blocks, _ = _blocks(content)
    for body in json_blocks or _bare_objects(content):
        finder.json_block(body)
    return finder.calls


def recover_code_call(content: str | None, code_tool: str = RUN_CODE) -> list[ToolCall]:
    """A reply holding exactly one fenced Python block becomes one `run_code` call."""
    if not content or len(content) > MAX_TEXT:
        return []
    blocks = [body for lang, body in _FENCE.findall(content) if lang.lower() in _PY_LANGS]
    if len(blocks) != 1 or not blocks[0].strip():
        return []
    return [_code_call(blocks[0], "code", code_tool)]


def _blocks(content: str) -> tuple[list[str], list[str]]:
    """Bodies of JSON-ish blocks (fences, `<tool_call>` tags) and of Python fences, in reply order."""
    json_blocks: list[str] = []
    py_blocks: list[str] = []
    for lang, body in _FENCE.findall(content):
        lang = lang.lower()
        if lang in _PY_LANGS:
            py_blocks.append(body)
        elif lang in _JSON_LANGS:
            json_blocks.append(body)
    rest = _FENCE.sub("", content)
    if "```" in rest and (m := _OPEN_FENCE.search(rest)):  # a fence the server cut off (max tokens)
        (py_blocks if m.group(1).lower() in _PY_LANGS else json_blocks).append(_Cut(m.group(2)))
    for body in _TAG.findall(content):
        if "```" not in body:  # a fenced call inside the tag was collected with the fences
            json_blocks.append(body.rstrip())
    return json_blocks, py_blocks


class _Cut(str):
    """The body of a block whose end never came: its last string is never completed by guessing."""


def _bare_objects(content: str) -> list[str]:
    """Unfenced JSON: the whole reply, or the text from the first line that starts with `{` (prose before
    it is the model's comment). Fenced blocks of other languages are left out."""
    content = _FENCE.sub("", content)
    text = content.strip()
    if text.startswith(("{", "[")):
        return [text]
    m = re.search(r"(?m)^[ \t]*\{", content)
    return [content[m.start():].strip()] if m else []


def _starts_with_call(content: str, tools: Tools) -> bool:
    m = re.match(r"\s*([A-Za-z_]\w*)\s*\(", content)
    return bool(m and tools.known(m.group(1)))


class _Finder:
    """Collects calls from blocks; remembers the first reason a call-like block could not be read."""

    def __init__(self, tools: Tools) -> None:
        self.tools = tools
        self.calls: list[ToolCall] = []
        self.kind: str | None = None
        self.problem: str | None = None
        self._seen: set[tuple[str, str]] = set()

    def _fail(self, reason: str) -> None:
        self.problem = self.problem or reason

    def _add(self, name: str, arguments: dict[str, Any], kind: str) -> None:
        key = (name, json.dumps(arguments, sort_keys=True))
        if key in self._seen:  # the same call written twice in one reply runs once
            return
        self._seen.add(key)
        self.kind = self.kind or (kind if name in self.tools.params else f"{kind}->code")
        if name in self.tools.params:
            text = json.dumps(arguments, ensure_ascii=False)
            self.calls.append(ToolCall(f"recovered_{uuid.uuid4().hex[:12]}_{len(self.calls)}", name, text, kind))
        else:  # a function that exists only inside run_code: call it there and print what it returns
            if all(k.isidentifier() for k in arguments):
                args = ", ".join(f"{k}={v!r}" for k, v in arguments.items())
            else:
                args = f"**{arguments!r}"
            self.calls.append(_code_call(f"print({name}({args}))\n", f"{kind}->code", self.tools.code_tool or RUN_CODE))

    # JSON ---------------------------------------------------------------------------------------

    def json_block(self, body: str, *, bare: bool = False) -> None:
        if not body.strip():
            return
        try:
            objects = _objects(body.strip(), bare=bare)
        except LenientError as exc:
            if not isinstance(body, _Cut) and (repaired := self._one_string_call(body.strip())):
                self._add(*repaired, "json-repaired")
            elif _looks_like_json_call(body, self.tools):
                self._fail(f"the call is not valid JSON ({exc})")
            return
        for obj in objects:
            self._json_call(obj, need_arguments=bare)

    def _one_string_call(self, body: str) -> tuple[str, dict[str, Any]] | None:
        """A run_code call whose program is written as loose JSON:
        unescaped quotes inside, or the closing quote or braces forgotten. The string runs from its
        opening quote to the end of the block; JSON escapes in it are decoded, nothing else is guessed."""
        m = _ONE_STRING.match(body)
        if not m:
            return None
        name, param, value = m.groups()
        code_tool = self.tools.code_tool
        if (name, param) != (code_tool, "code") or code_tool not in self.tools.params:
            return None  # only a program is long enough to be written this loosely
        if re.search(r'"\s*\}\s*\}', value):
            return None  # the string ended and text (another call, prose) follows: not one loose program
        return name, {param: _JSON_ESCAPE.sub(lambda e: json.loads(f'"\\{e.group(1)}"'), value)}

    def _json_call(self, obj: Any, *, need_arguments: bool = False) -> None:
        """`need_arguments`: an object inside prose counts only with an arguments key."""
        if not isinstance(obj, dict):
            return
        if isinstance(obj.get("function"), dict):  # the wire form {"type": "function", "function": {...}}
            obj = obj["function"]
        name = next((obj[k] for k in NAME_KEYS if isinstance(obj.get(k), str)), None)
        arg_key = next((k for k in ARG_KEYS if k in obj), None)
        if name is None and len(obj) == 1:  # {"read_file": {"path": "a.txt"}}
            only = next(iter(obj))
            if self.tools.known(only) and isinstance(obj[only], dict):
                name, arguments = only, obj[only]
                self._add(name, arguments, "json")
                return
        if name is None:
            return
        if arg_key is None and (need_arguments or set(obj) - {*NAME_KEYS, "type", "id"}):
            return  # data that has a "name", not a call
        if not self.tools.known(name):
            if arg_key is not None and name.isidentifier():
                sent = ", ".join(self.tools.params)
                inner = f"; inside run_code: {', '.join(self.tools.code_functions)}" if self.tools.code_functions else ""
                self._fail(f"there is no tool named {name!r} (tools: {sent}{inner})")
            return
        arguments = obj.get(arg_key) if arg_key else {}
        if arguments is None:
            arguments = {}
        if isinstance(arguments, str):
            try:
                arguments = loads_lenient(arguments) if arguments.strip() else {}
            except LenientError as exc:
                self._fail(f"the arguments of {name} are not a JSON object ({exc})")
                return
        if not isinstance(arguments, dict):
            self._fail(f"the arguments of {name} must be an object, not {type(arguments).__name__}")
            return
        self._add(name, arguments, "json")

    # Python call syntax -------------------------------------------------------------------------

    def python_calls(self, body: str, *, whole: bool = False) -> None:
        """`name(...)` statements only, each naming a known tool with literal arguments."""
        body = body.strip()
        tree = _parse_prefix(body) if whole else _parse(body)
        if tree is None:
            if whole:
                self._fail("the call is not valid Python syntax")
            return
        calls = []
        for stmt in tree.body:
            if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
                    and isinstance(stmt.value.func, ast.Name) and self.tools.known(stmt.value.func.id)):
                return  # a program, not a list of calls
            calls.append(stmt.value)
        found = []
        segments = Segments(body)
        for node in calls:
            name = node.func.id  # type: ignore[attr-defined]
            try:
                found.append((name, self._arguments(name, node, segments)))
            except LenientError as exc:
                self._fail(f"{name}(...): {exc}")
                return
        for name, arguments in found:
            self._add(name, arguments, "python")

    def _arguments(self, name: str, node: ast.Call, source: Segments) -> dict[str, Any]:
        params = self.tools.params.get(name) or self.tools.code_functions.get(name) or []
        if len(node.args) > len(params):
            raise LenientError(f"{len(node.args)} positional arguments, but {name} takes {len(params)}")
        out: dict[str, Any] = {}
        for param, arg in zip(params, node.args, strict=False):
            out[param] = _value(arg, source)
        for kw in node.keywords:
            if kw.arg is None:
                raise LenientError("`**` arguments cannot be read")
            out[kw.arg] = _value(kw.value, source)
        return out


def _parse(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _parse_prefix(source: str, max_lines: int = 80, max_chars: int = 8_000) -> ast.Module | None:
    """The longest run of leading lines that parses: a call followed by the model's prose still counts.

    The whole text is tried once; shorter runs only within the first `max_lines` lines and `max_chars`
    characters, so the work stays linear in the reply (up to 80 parses of it took seconds at 200 KB).
    """
    whole = _parse(source)
    if whole is not None and whole.body:
        return whole
    lines, size = [], 0
    for line in source.splitlines()[:max_lines]:
        size += len(line) + 1
        if size > max_chars:
            break
        lines.append(line)
    for end in range(len(lines), 0, -1):
        tree = _parse("\n".join(lines[:end]))
        if tree is not None and tree.body:
            return tree
    return None


def _value(node: ast.AST, source: Segments) -> Any:
    segment = source.of(node)
    if segment is None:
        raise LenientError("an argument could not be read")
    try:
        return loads_lenient(segment)
    except LenientError:
        raise LenientError(f"argument {segment[:60]!r} is not a literal value") from None


def _objects(body: str, *, bare: bool) -> list[Any]:
    """One value, one object per line, or several objects in a row."""
    try:
        value = loads_lenient(body)
        return value if isinstance(value, list) else [value]
    except LenientError as exc:
        error = exc
    decoder = json.JSONDecoder(strict=False)
    out: list[Any] = []
    pos = 0
    while pos < len(body):
        while pos < len(body) and body[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(body):
            return out
        try:
            value, pos = decoder.raw_decode(body, pos)
        except (ValueError, RecursionError):  # not JSON, a number of 4,300+ digits, or nested too deeply
            break
        if depth_problem(value):
            break
        out.append(value)
    if bare and out:
        return out  # a bare object followed by prose: the prose is the model's comment
    lines = [line for line in body.splitlines() if line.strip()]
    if len(lines) > 1:
        parsed = []
        for i, line in enumerate(lines):
            try:
                parsed.append(loads_lenient(line))
            except LenientError:
                if i == len(lines) - 1 and parsed:
                    return parsed  # one call per line, the last one cut off (max tokens): it is dropped
                break
        else:
            return parsed
    raise error


def depth_problem(value: Any) -> bool:
    """True when `value` nests too deeply to be a call's arguments (see `toolmode.bounded`)."""
    try:
        check_depth(value)
    except ParseLimitError:
        return True
    return False


def _looks_like_json_call(text: str, tools: Tools, *, strict: bool = False) -> bool:
    """A key naming a known tool (`"name": "read_file"`) or a quoted tool name, next to an arguments key
    (`strict`: both a name key and an arguments key)."""
    names = "|".join(re.escape(n) for n in [*tools.params, *tools.code_functions])
    if not names:
        return False
    keys = "|".join(NAME_KEYS)
    args = re.search(rf"""["'](?:{"|".join(ARG_KEYS)})["']\s*:""", text)
    if re.search(rf"""["']?(?:{keys})["']?\s*:\s*["'](?:{names})["']""", text):
        return bool(args) or not strict
    return bool(args and re.search(rf"""["'](?:{names})["']""", text))


def _call_like(content: str, tools: Tools) -> str | None:
    """Why an unread reply still looks like a call (a `<tool_call>` tag, or JSON keys naming a tool)."""
    if "<tool_call>" in content:
        return "the text inside <tool_call> is not a call to a known tool"
    if _ONLY_TAGS.fullmatch(content.strip()):
        return f"the reply holds only the markup {content.strip()[:40]!r}, neither a call nor an answer"
    if _looks_like_json_call(content, tools, strict=True):
        return "the call is written inside other text; send it alone"
    return None


def _code_call(code: str, kind: str, code_tool: str = RUN_CODE) -> ToolCall:
    call_id = f"recovered_code_{uuid.uuid4().hex[:12]}"
    return ToolCall(id=call_id, name=code_tool, arguments=json.dumps({"code": code}), recovered=kind)


def _print_last_expression(code: str) -> str:
    """A program ending in a bare expression (`read_file("a.txt")`) prints its value, as a REPL would."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return code
    last = tree.body[-1] if tree.body else None
    if not isinstance(last, ast.Expr) or last.end_lineno is None:
        return code
    if isinstance(last.value, ast.Call) and isinstance(last.value.func, ast.Name) and last.value.func.id == "print":
        return code
    lines = code.splitlines()
    if last.lineno != last.end_lineno or last.col_offset != 0 or last.end_col_offset is None:
        return code
    line = lines[last.lineno - 1].encode()  # ast offsets count UTF-8 bytes
    expression = line[: last.end_col_offset].decode()
    lines[last.lineno - 1] = f"print({expression}){line[last.end_col_offset:].decode()}"
    return "\n".join(lines) + "\n"
