"""Checker and answer-parsing tests: numbers, Chinese answers, clock times, and each kind of checker."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from toolmode.bench.parse import chinese_int, has_number, mentions, numbers_in, segments, times_in
from toolmode.bench.tasks.api import check_payroll, check_phone, check_total
from toolmode.bench.tasks.common import MOST, first_after
from toolmode.bench.tasks.diagnosis import check_diagnosis
from toolmode.bench.tasks.files import check_inventory, check_logs, check_orders
from toolmode.bench.tasks.web import check_time_title


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("total: 1,234,567.89 EUR", 1234567.89),
        ("€12 345,00", None),  # a European decimal comma is not guessed at
        ("合计 ¥95,598.01 元", 95598.01),
        ("约 1.2万 元", 12000),
        ("3.5k tokens", 3500),
        ("-42 °C", -42),
        ("１２３ items", 123),
        ("2.5 million", 2_500_000),
        ("共二十三笔", 23),
        ("一百零五个", 105),
    ],
)
def test_numbers_in(text: str, expected: float | None) -> None:
    if expected is None:
        assert 12345.0 not in numbers_in(text)
    else:
        assert has_number(text, expected), numbers_in(text)


def test_numbers_in_dates_and_names_do_not_produce_negatives() -> None:
    assert numbers_in("2026-11-30 app-3.log") == [2026, 11, 30, 3]


def test_chinese_int() -> None:
    assert chinese_int("三万五千") == 35000
    assert chinese_int("二〇二六") == 2026
    assert chinese_int("十二") == 12
    assert chinese_int("abc") is None


def test_times_in_formats() -> None:
    assert times_in("It is 2:05 PM there") == [(14, 5)]
    assert times_in("现在是下午3点20分") == [(15, 20)]
    assert times_in("time: 09:07; title: x") == [(9, 7)]
    assert times_in("12 am sharp") == [(0, 0)]


def test_mentions_is_loose_about_case_width_and_separators() -> None:
    assert mentions("The SVC Falcon config", "svc-falcon")
    assert not mentions("svc-falconry", "svc-hawk")


TITLE_QUOTES = "Release Notes: Nimbus 4.2 \u201cHeron\u201d"
TITLE_DASH = "Quarterly Harbour Report \u2014 Tidewater Logistics"
TITLE_ACCENT = "The Lantern Caf\u00e9 \u00b7 Seasonal Menu"
TITLE_PARENS = "Field Guide to Urban Moths (2nd edition)"


@pytest.mark.parametrize(
    ("answer", "title"),
    [
        ('title: Release Notes: Nimbus 4.2 "Heron"', TITLE_QUOTES),  # straight quotes
        ("title: Release Notes: Nimbus 4.2 \u2018Heron\u2019", TITLE_QUOTES),  # single curly quotes
        ("title: Release Notes: Nimbus 4.2 Heron", TITLE_QUOTES),  # no quotes at all
        ("title: Quarterly Harbour Report - Tidewater Logistics", TITLE_DASH),  # hyphen for em dash
        ("title: Quarterly Harbour Report \u2013 Tidewater Logistics", TITLE_DASH),  # en dash
        ("title: Quarterly Harbour Report\u2014Tidewater Logistics", TITLE_DASH),  # no spaces
        ("title: Quarterly Harbour Report | Tidewater Logistics", TITLE_DASH),
        ("title: The Lantern Cafe - Seasonal Menu", TITLE_ACCENT),  # no accent, hyphen for the dot
        ("title: THE LANTERN CAFE\u0301 \u2022 SEASONAL MENU", TITLE_ACCENT),  # combining accent, bullet
        ("title: The Lantern Caf\u00e9: Seasonal Menu", TITLE_ACCENT),
        # Chinese answers: full-width punctuation, book-title marks, corner quotes, Chinese dash
        ("\u6807\u9898\uff1a\u300aRelease Notes\uff1aNimbus 4.2 \u201cHeron\u201d\u300b", TITLE_QUOTES),
        ("\u6807\u9898\u662f\u300cThe Lantern Cafe\u00b7Seasonal Menu\u300d\u3002", TITLE_ACCENT),
        ("\u6807\u9898\uff1aQuarterly Harbour Report\u2014\u2014Tidewater Logistics\uff0c", TITLE_DASH),
        ("\u6807\u9898\uff1aField Guide to Urban Moths\uff082nd edition\uff09", TITLE_PARENS),
        (
            "\uff34\uff48\uff45 \uff2c\uff41\uff4e\uff54\uff45\uff52\uff4e Caf\u00e9 \uff0d Seasonal Menu",
            TITLE_ACCENT,
        ),
    ],
)
def test_mentions_ignores_typography(answer: str, title: str) -> None:
    assert mentions(answer, title)


@pytest.mark.parametrize(
    ("answer", "title"),
    [
        ("title: Release Notes: Nimbus 4.3 Heron", TITLE_QUOTES),
        ("title: Release Notes: Nimbus 42 Heron", TITLE_QUOTES),
        ("title: The Lantern Cafe", TITLE_ACCENT),
        ("title: Quarterly Report - Tidewater Logistics", TITLE_DASH),
        ("title: Today", TITLE_DASH),
    ],
)
def test_mentions_still_needs_the_words(answer: str, title: str) -> None:
    assert not mentions(answer, title)


def test_time_title_checker_accepts_other_typography(tmp_path: Path) -> None:
    now = datetime.now(ZoneInfo("Europe/Berlin"))
    facts = {"tz": "Europe/Berlin", "title": TITLE_QUOTES}
    assert check_time_title(
        f'time: {now:%H:%M}; title: Release Notes: Nimbus 4.2 "Heron"', tmp_path, facts
    ).ok
    facts = {"tz": "Europe/Berlin", "title": TITLE_ACCENT}
    assert check_time_title(
        f"\u73b0\u5728 {now:%H:%M}\uff0c\u6807\u9898\u300aThe Lantern Cafe - Seasonal Menu\u300b",
        tmp_path,
        facts,
    ).ok


def test_first_after_ignores_accents() -> None:
    assert (
        first_after("top earner: Jose Garcia", MOST, ["Ana Li", "Jos\u00e9 Garc\u00eda"])
        == "Jos\u00e9 Garc\u00eda"
    )


def test_segments_keep_numbers_next_to_their_file() -> None:
    parts = segments("a.log has 10 lines and 2 errors. b.log: 5 / 1", ["a.log", "b.log"])
    assert numbers_in(parts["a.log"]) == [10, 2]
    assert numbers_in(parts["b.log"]) == [5, 1]


LOG_FACTS = {
    "files": {"api.log": {"lines": 40, "errors": 3}, "db.log": {"lines": 1200, "errors": 17}},
    "top": "db.log",
}


@pytest.mark.parametrize(
    "answer",
    [
        "api.log: 40 lines, 3 ERROR\ndb.log: 1,200 lines, 17 ERROR\nmost errors: db.log",
        "| file | lines | errors |\n| api.log | 40 | 3 |\n| db.log | 1200 | 17 |\nThe file with the most ERROR lines is db.log.",
        "api.log 共 40 行，其中 ERROR 3 行；db.log共 1200 行，ERROR 十七 行。错误最多的是db.log。",
    ],
)
def test_log_checker_accepts_layouts_and_chinese(answer: str, tmp_path: Path) -> None:
    assert check_logs(answer, tmp_path, LOG_FACTS).ok


@pytest.mark.parametrize(
    "answer",
    [
        "api.log: 40 lines, 3 ERROR\ndb.log: 1,200 lines, 16 ERROR\nmost errors: db.log",  # wrong count
        "api.log: 40 lines, 3 ERROR\ndb.log: 1,200 lines, 17 ERROR\nmost errors: api.log",  # wrong top
        "db.log: 40 lines, 3 ERROR\napi.log: 1,200 lines, 17 ERROR\nmost errors: db.log",  # numbers swapped
    ],
)
def test_log_checker_rejects_wrong_answers(answer: str, tmp_path: Path) -> None:
    assert not check_logs(answer, tmp_path, LOG_FACTS).ok


def test_orders_checker_chinese(tmp_path: Path) -> None:
    facts = {"total": 95598.01, "count": 23}
    assert check_orders("已完成订单共二十三笔，总金额 95,598.01 元。", tmp_path, facts).ok
    assert check_orders("已完成订单共23笔，总金额95,598.01元。", tmp_path, facts).ok
    assert not check_orders("已完成订单共 22 笔，总金额 95,598.01 元。", tmp_path, facts).ok
    assert not check_orders("共 23 笔，总金额约 9.6万 元", tmp_path, facts).ok


def test_total_checker_tolerates_rounding_only(tmp_path: Path) -> None:
    facts = {"total": 2532.58}
    assert check_total("Total: €2,532.58", tmp_path, facts).ok
    assert check_total("about 2532.579 EUR", tmp_path, facts).ok
    assert not check_total("Total: 2,533.58 EUR", tmp_path, facts).ok


def test_phone_checker_ignores_formatting(tmp_path: Path) -> None:
    facts = {"phone": "+47 291 3978"}
    assert check_phone("Call +47-291-3978.", tmp_path, facts).ok
    assert not check_phone("Call +47 291 3979.", tmp_path, facts).ok


def test_payroll_checker_needs_the_top_earner(tmp_path: Path) -> None:
    facts = {"total": 1131000, "top": "Tomas Tanaka", "members": ["Tomas Tanaka", "Mei Park"]}
    assert check_payroll("total: 1,131,000; top: Tomas Tanaka", tmp_path, facts).ok
    assert check_payroll("总薪资 113.1万，最高的是 Tomas Tanaka", tmp_path, facts).ok
    assert not check_payroll("total: 1,131,000; top: Mei Park", tmp_path, facts).ok


def test_diagnosis_checker_needs_service_and_cause(tmp_path: Path) -> None:
    facts = {"service": "ledger", "cause": "disk", "keywords": ["disk", "no space", "磁盘"]}
    assert check_diagnosis("ledger is failing: No space left on device.", tmp_path, facts).ok
    assert check_diagnosis("ledger 服务磁盘已满。", tmp_path, facts).ok
    assert not check_diagnosis("ledger is failing because of memory.", tmp_path, facts).ok
    assert not check_diagnosis("checkout is out of disk space.", tmp_path, facts).ok


def test_time_title_checker_uses_the_city_clock(tmp_path: Path) -> None:
    facts = {"tz": "Asia/Tokyo", "title": "Orbital Mechanics for Gardeners"}
    now = datetime.now(ZoneInfo("Asia/Tokyo"))
    twelve = now.strftime("%I:%M %p").lstrip("0")
    assert check_time_title(f"time: {now:%H:%M}; title: Orbital Mechanics for Gardeners", tmp_path, facts).ok
    assert check_time_title(
        f"It is {twelve}; the page is “orbital mechanics for gardeners”", tmp_path, facts
    ).ok
    later = (now.hour + 3) % 24
    assert not check_time_title(
        f"time: {later:02d}:{now:%M}; title: Orbital Mechanics for Gardeners", tmp_path, facts
    ).ok
    assert not check_time_title(f"time: {now:%H:%M}; title: Today", tmp_path, facts).ok


def test_inventory_checker_reads_the_written_file(tmp_path: Path) -> None:
    facts = {"rows": [["SKU-1000", 5], ["SKU-2000", 12]]}
    assert not check_inventory("done", tmp_path, facts).ok
    (tmp_path / "report.csv").write_text("sku,total_qty\nSKU-1000,5\nSKU-2000,12\n")
    assert check_inventory("done", tmp_path, facts).ok
    (tmp_path / "report.csv").write_text("sku,total_qty\nSKU-2000,12\nSKU-1000,5\n")
    assert not check_inventory("done", tmp_path, facts).ok
