"""Tokeniser for tool search: identifier splitting, English stop words, a light stemmer, CJK n-grams.

`tokenize("getWeatherForecast for 北京天气")` gives
`["get", "weather", "forecast", "北", "京", "天", "气", "北京", "京天", "天气"]`: identifiers are split on
`_ . - /`, camelCase and digits, English words are lower-cased, stop words dropped and stemmed, and runs of
CJK characters become single characters plus character bigrams (no dictionary needed, so any Chinese text
works, and a bigram match outweighs a stray single-character match through its rarer document frequency).
In a query (`tokenize_query`), Chinese words of the small tool lexicon (`lexicon.py`) also add their
English words ("读取文件" -> read, file), so a Chinese query finds tools documented in English.
"""

from __future__ import annotations

import re
from functools import lru_cache

from toolmode.tools.lexicon import english_terms

# CJK Unified Ideographs (+ extension A), compatibility ideographs, Hiragana/Katakana, Hangul syllables.
_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
_RUN = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+")
CJK_CHAR = re.compile(rf"[{_CJK}]")
# Parts of a latin run: acronyms before a capitalised word (HTTPServer -> HTTP, Server), words, numbers.
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_]+")
_IS_CJK = re.compile(rf"[{_CJK}]")

_STOP_TEXT = """
    a about above after again against all am an and any are as at be because been before being below between
    both but by can could did do does doing during each few for from further had has have having he her
    here hers herself him himself his how i if in into is it its itself just let me more most my myself no nor
    not of on once only or other our ours ourselves own please same she should so some such than
    that the their theirs them themselves then there these they this those through to too until us
    very was we were what when where which while who whom why will with would you your yours yourself
    yourselves don doesn didn isn aren wasn won ll ve re
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())
# Function characters that carry no topic; everything else in a CJK run is kept.
CJK_STOP = frozenset("的了是在和与及或把被给吗呢吧啊请我你他她它们这那个一")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Light English suffix stripping: plurals, -ing, -ed and a final -e, so "downloading" == "downloads".

    Deliberately weaker than Porter: it only conflates inflections, never derivations
    ("organization" stays apart from "organ"), which keeps precision on short tool descriptions.
    """
    w = word
    if len(w) <= 3 or not w.isalpha():
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith(("sses", "ches", "shes", "xes", "zzes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    for suffix in ("ing", "ed"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3 and _has_vowel(w[: -len(suffix)]):
            w = w[: -len(suffix)]
            if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":
                w = w[:-1]  # running -> run, shipped -> ship
            break
    if w.endswith("e") and len(w) > 4:
        w = w[:-1]  # write/writing -> writ, page/pages -> pag
    return w


def _has_vowel(text: str) -> bool:
    return any(c in "aeiouy" for c in text)


def split_identifier(text: str) -> list[str]:
    """Split an identifier or phrase into lower-case words: `get_HTTPResponse2json` -> get, http, response, 2, json."""
    return [p.lower() for run in _RUN.findall(text) if not _IS_CJK.match(run) for p in _PART.findall(run)]


@lru_cache(maxsize=65536)
def _latin_terms(run: str) -> tuple[str, ...]:
    words = [p.lower() for p in _PART.findall(run)] if not run.islower() else [run]
    if len(words) == 1:
        # Letters and digits glued together ("mp3", "utf8") are split too.
        words = [p.lower() for p in re.findall(r"\d+|\D+", words[0])]
    # Single letters are left-overs of contractions and initials ("don't" -> "don", "t").
    return tuple(stem(w) for w in words if w not in STOP_WORDS and (len(w) > 1 or w.isdigit()))


def _cjk_terms(run: str) -> list[str]:
    out = [c for c in run if c not in CJK_STOP]
    out.extend(run[i : i + 2] for i in range(len(run) - 1))
    return out


def tokenize(text: str) -> list[str]:
    """Search terms of a text, in order (see the module docstring)."""
    out: list[str] = []
    for run in _RUN.findall(text):
        if _IS_CJK.match(run):
            out.extend(_cjk_terms(run))
        else:
            out.extend(_latin_terms(run))
    return out


def tokenize_query(text: str) -> list[str]:
    """Search terms of a query: `tokenize`, plus the English words of the Chinese tool vocabulary found in
    its CJK runs, so "读取文件" also matches a tool documented as "Read a file". Only queries are expanded:
    the index of the tools stays as their own words."""
    out = tokenize(text)
    if not _IS_CJK.search(text):
        return out
    for run in _RUN.findall(text):
        if _IS_CJK.match(run):
            for word in english_terms(run):
                out.extend(_latin_terms(word))
    return out


def plain_tokenize(text: str) -> list[str]:
    """Baseline tokens: lower-cased `\\w+` runs, nothing else (for comparisons in the benchmark)."""
    return re.findall(r"\w+", text.lower())
