"""Robust reading of numbers, times and names out of free-text answers (English and Chinese).

Checkers never ask a model: they look for the expected values in the answer, tolerating thousands
separators, full-width digits, currency signs and units, `万`/`亿`/`k`/`million` multipliers,
Chinese numerals and 12-hour clock times.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable

_MULTIPLIERS = {
    "万": 1e4,
    "亿": 1e8,
    "千": 1e3,
    "k": 1e3,
    "thousand": 1e3,
    "m": 1e6,
    "million": 1e6,
    "mn": 1e6,
    "bn": 1e9,
    "billion": 1e9,
}
_NUMBER = re.compile(
    r"(?<![A-Za-z0-9_.])(?P<sign>[-+])?"
    r"(?P<num>\d{1,3}(?:[,'\u2009\u202f\u00a0_]\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"(?:\s?(?P<mult>万|亿|千|thousand|million|billion|bn|mn|k|m)(?![a-z]))?",
    re.IGNORECASE,
)
_CN_DIGITS = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_CN_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10_000, "亿": 100_000_000}
_CN_NUMBER = re.compile(r"[零〇一二两三四五六七八九十百千万亿]+")


def normalize(text: str) -> str:
    """Full-width to ASCII, accents dropped (`Café` → `cafe`), unicode minus to '-', case-folded,
    whitespace collapsed."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if unicodedata.category(ch) not in ("Mn", "Me"))
    text = unicodedata.normalize("NFC", text).replace("\u2212", "-").replace("，", ",")
    return re.sub(r"\s+", " ", text).strip().casefold()


def numbers_in(text: str) -> list[float]:
    """Every number written in `text`, in order (digits, separators, multipliers, Chinese numerals)."""
    text = unicodedata.normalize("NFKC", text).replace("\u2212", "-")
    found: list[tuple[int, float]] = []
    for m in _NUMBER.finditer(text):
        raw = re.sub(r"[,'\u2009\u202f\u00a0_]", "", m.group("num"))
        value = float(raw)
        mult = (m.group("mult") or "").lower()
        # A bare "m" right after a number is more often metres/minutes than millions.
        if mult and mult != "m":
            value *= _MULTIPLIERS[mult]
        if m.group("sign") == "-":
            value = -value
        found.append((m.start(), value))
    for m in _CN_NUMBER.finditer(text):
        number = chinese_int(m.group())
        if number is not None and not (len(m.group()) == 1 and m.group() in "万亿千百十"):
            found.append((m.start(), float(number)))
    return [v for _, v in sorted(found, key=lambda p: p[0])]


def chinese_int(text: str) -> int | None:
    """Parse a Chinese numeral such as `二十三`, `一百零五`, `三万五千`; None if it is not one."""
    if not text or any(ch not in _CN_DIGITS and ch not in _CN_UNITS for ch in text):
        return None
    if all(ch in _CN_DIGITS for ch in text) and len(text) > 1:
        return int("".join(str(_CN_DIGITS[ch]) for ch in text))  # digit by digit: 二〇二六
    total, section, digit = 0, 0, 0
    for ch in text:
        if ch in _CN_DIGITS:
            digit = _CN_DIGITS[ch]
            continue
        unit = _CN_UNITS[ch]
        if unit >= 10_000:
            total = (total + section + digit) * unit
            section, digit = 0, 0
        else:
            section += (digit or 1) * unit
            digit = 0
    return total + section + digit


def close(a: float, b: float, *, rel: float = 1e-4, abs_tol: float = 0.011) -> bool:
    """True if two numbers agree within a relative or absolute tolerance (rounding to cents)."""
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_tol)


def has_number(text: str, expected: float, *, rel: float = 1e-4, abs_tol: float = 0.011) -> bool:
    """True if `expected` is among the numbers written in `text`."""
    return any(close(v, expected, rel=rel, abs_tol=abs_tol) for v in numbers_in(text))


def mentions(text: str, phrase: str) -> bool:
    """Does `text` contain `phrase`, whatever the typography? See `loose`."""
    return loose(phrase) in loose(text)


# Quote marks are dropped (an apostrophe inside a word joins it); other punctuation separates words.
_QUOTES = dict.fromkeys(map(ord, "'\"`´‘’‚‛“”„‟′″"), None)
_SEPARATORS = "·•|"


def loose(text: str) -> str:
    """`text` reduced to its words, for comparing names and titles written with other typography.

    Full-width forms become ASCII, accents are dropped (`Café` = `Cafe`), straight and curly quotes are
    dropped, every dash, `·`, `•`, `|`, `_` and any other punctuation (ASCII, full-width or Chinese:
    `：《》「」。`) separates words, a run of separators counts as one space, and case is folded. So
    `Report — Tidewater`, `Report - Tidewater` and `Report|Tidewater` all read `report tidewater`.
    """
    text = normalize(text).translate(_QUOTES)
    chars = [" " if ch in _SEPARATORS or unicodedata.category(ch)[0] in "PZ" else ch for ch in text]
    return re.sub(r"\s+", " ", "".join(chars)).strip()


def segments(text: str, keys: Iterable[str]) -> dict[str, str]:
    """For each key, the text from each mention of it up to the next mention of any key (joined).

    Lets a checker look for a file's numbers next to that file's name, whatever the layout.
    """
    norm = normalize(text)
    keys = list(keys)
    spots: list[tuple[int, int, str]] = []
    for key in keys:
        k = normalize(key)
        for m in re.finditer(re.escape(k) + r"(?![A-Za-z0-9_]|\.[A-Za-z0-9_])", norm):
            spots.append((m.start(), m.end(), key))
    spots.sort()
    out = {key: "" for key in keys}
    for i, (_, end, key) in enumerate(spots):
        stop = spots[i + 1][0] if i + 1 < len(spots) else len(norm)
        out[key] += " " + norm[end:stop]
    return out


_TIME_24 = re.compile(r"(?<!\d)(\d{1,2})\s*[:：时点]\s*(\d{2})(?!\d)")
_TIME_AMPM = re.compile(r"(?<!\d)(\d{1,2})(?:\s*[:.]\s*(\d{2}))?\s*([ap])\.?\s?m\b", re.IGNORECASE)
_TIME_CN = re.compile(r"(上午|早上|凌晨|中午|下午|晚上)\s*(\d{1,2})\s*[:：点时]\s*(\d{1,2})?")


def times_in(text: str) -> list[tuple[int, int]]:
    """Clock times in `text` as (hour, minute) on a 24-hour clock: `14:05`, `2:05 PM`, `下午2点05分`."""
    text = unicodedata.normalize("NFKC", text)
    found: list[tuple[int, int, int]] = []
    taken: list[range] = []
    for m in _TIME_AMPM.finditer(text):
        hour, minute = int(m.group(1)) % 12, int(m.group(2) or 0)
        found.append((m.start(), hour + (12 if m.group(3).lower() == "p" else 0), minute))
        taken.append(range(m.start(), m.end()))
    for m in _TIME_CN.finditer(text):
        hour, minute = int(m.group(2)) % 12, int(m.group(3) or 0)
        if m.group(1) in ("下午", "晚上") or (m.group(1) == "中午" and hour < 11):
            hour += 12
        found.append((m.start(), hour, minute))
        taken.append(range(m.start(), m.end()))
    for m in _TIME_24.finditer(text):
        if not any(m.start() in r for r in taken):
            found.append((m.start(), int(m.group(1)), int(m.group(2))))
    found.sort()
    return [(h, mi) for _, h, mi in found if 0 <= h < 24 and 0 <= mi < 60]


def minutes_apart(a: tuple[int, int], b: tuple[int, int]) -> int:
    """Distance in minutes between two clock times, around midnight."""
    d = abs((a[0] * 60 + a[1]) - (b[0] * 60 + b[1]))
    return min(d, 24 * 60 - d)
