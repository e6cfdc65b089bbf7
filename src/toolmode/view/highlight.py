"""Python code as a list of (class, text) tokens for the page, lexed by Pygments (already installed with rich).

The page turns each token into a <span> whose text is set with textContent, so nothing in the code is
ever parsed as HTML. Only a few coarse classes are kept (keyword, string, number, comment, function or
class name, builtin, operator, decorator); adjacent tokens of one class are merged.
"""

from __future__ import annotations

HIGHLIGHT_LIMIT = 100_000  # characters lexed; the rest is shown plain (a planted megabyte stays cheap)

_CLASSES = (  # (Pygments token type name, class) checked in order: the first ancestor that matches wins
    ("Comment", "c"),
    ("Literal.String", "s"),
    ("Literal.Number", "n"),
    ("Keyword", "k"),
    ("Operator.Word", "k"),
    ("Operator", "o"),
    ("Name.Decorator", "d"),
    ("Name.Function", "f"),
    ("Name.Class", "f"),
    ("Name.Builtin", "b"),
    ("Name.Exception", "b"),
)


def _class_of(ttype: object, cache: dict[object, str]) -> str:
    found = cache.get(ttype)
    if found is None:
        name = str(ttype).removeprefix("Token.")
        found = next((cls for prefix, cls in _CLASSES if name == prefix or name.startswith(prefix + ".")), "")
        cache[ttype] = found
    return found


def python_tokens(code: str) -> list[list[str]]:
    """`code` as [[class, text], ...] (class "" for plain text); joined, the texts give `code` back."""
    from pygments.lexers.python import PythonLexer

    head, rest = code[:HIGHLIGHT_LIMIT], code[HIGHLIGHT_LIMIT:]
    lexer = PythonLexer(stripnl=False, stripall=False, ensurenl=False)
    cache: dict[object, str] = {}
    tokens: list[list[str]] = []
    for ttype, text in lexer.get_tokens(head):
        cls = _class_of(ttype, cache)
        if tokens and tokens[-1][0] == cls:
            tokens[-1][1] += text
        else:
            tokens.append([cls, text])
    if "\r" in head:
        tokens = _realign(tokens, head)
    if "".join(text for _, text in tokens) != head:  # never show code other than what was run
        tokens = [["", head]]
    if rest:
        tokens.append(["", rest])
    return tokens


def _realign(tokens: list[list[str]], code: str) -> list[list[str]]:
    """Put back the carriage returns Pygments turned into newlines (a stray \\r must stay visible)."""
    out, i = [], 0
    for cls, text in tokens:
        j = i
        for ch in text:
            if ch == "\n" and code[j : j + 1] == "\r":
                j += 2 if code[j + 1 : j + 2] == "\n" else 1
            else:
                j += 1
        out.append([cls, code[i:j]])
        i = j
    return out
