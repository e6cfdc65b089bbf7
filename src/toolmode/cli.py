"""The `toolmode` command: thin argument parsing over the library."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any, cast

from toolmode.cliargs import (
    OneLineParser,
    add_model_args,
    budget_number,
    comma_list,
    non_negative_int,
    positive_int,
)
from toolmode.defaults import DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_RESULT_CHARS, DEFAULT_MAX_STEPS

__all__ = ["OneLineParser", "error_line", "json_text", "main"]


def _chosen_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The (sub)parser that parsed the innermost subcommand in `args`, e.g. that of `toolmode tools search`."""
    while True:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        name = getattr(args, subs[0].dest, None) if subs else None
        if name is None or name not in subs[0].choices:
            return parser
        parser = subs[0].choices[name]


def _add_tool_args(p: argparse.ArgumentParser, *, nested: bool = False) -> None:
    """The options that choose the tools. `nested`: a sub-command repeating them must not reset
    what the parent command already parsed, so its defaults are suppressed."""
    def default(value: Any) -> Any:
        return argparse.SUPPRESS if nested else value

    p.add_argument("--workspace", default=default("."),
                   help="directory the file and shell tools are confined to (default: .)")
    p.add_argument("--allow-private-network", action="store_true", default=default(False),
                   help="let fetch_url reach loopback/private addresses (off by default)")
    p.add_argument("--mcp", action="append", default=default([]), metavar="CMD_OR_URL",
                   help="add an MCP server's tools (command line or URL); repeatable")
    p.add_argument("--mcp-config", metavar="FILE", default=default(None), help="mcp.json with {'mcpServers': {...}}")
    p.add_argument("--no-builtin", action="store_true", default=default(False), help="do not offer the builtin tools")
    p.add_argument("--allow-env-in-workspace", action="store_true", default=default(False),
                   help="allow a workspace that contains toolmode's own Python environment, package or a sys.path "
                        "directory (unsafe: code and run_shell could change them)")


def _add_agent_args(run: argparse.ArgumentParser) -> None:
    """The options of `run` and `chat` that configure the agent (mode, model, limits, trace)."""
    from toolmode.modes.registry import mode_names

    run.add_argument("--mode", choices=mode_names(), default="code",
                     help="react: native tool calls; code: one run_code tool; hybrid: both; or a mode another "
                          "package registered (default: %(default)s)")
    run.add_argument("--search", choices=["load", "proxy"], help="react mode: how hidden tools are found")
    run.add_argument("--ranker", choices=["bm25", "fused"], default="bm25",
                     help="tool-search ranker; fused adds embeddings (pip install 'toolmode[semantic-lite]')")
    run.add_argument("--visible", help="comma-separated tools shown in the prompt; the rest are hidden (searchable)")
    run.add_argument("--direct", help="hybrid mode: comma-separated tools sent directly beside run_code")
    run.add_argument("--preset", help="deepseek (default), openai, openrouter, ollama, vllm, llamacpp")
    run.add_argument("--model")
    run.add_argument("--base-url")
    run.add_argument("--api-key-env", help="name of the environment variable holding the API key")
    run.add_argument("--max-steps", type=positive_int, default=DEFAULT_MAX_STEPS,
                     help="model requests before the run stops (default: %(default)s)")
    run.add_argument("--max-result-chars", type=non_negative_int, default=DEFAULT_MAX_RESULT_CHARS,
                     help="cut each tool result to this many characters; 0 = no cut (default: %(default)s)")
    run.add_argument("--stream", action="store_true", help="stream replies (SSE)")
    run.add_argument("--idle-timeout", type=budget_number, default=DEFAULT_IDLE_TIMEOUT, metavar="SECONDS",
                     help="--stream: retry a reply that has started and then sends nothing for this long "
                          "(default: %(default)g)")
    run.add_argument("--sandbox", choices=["auto", "namespaces", "bwrap", "unshare", "landlock", "none"], default="auto",
                     help="code sandbox tier (README: The sandbox); 'none' runs model code unconfined (unsafe)")
    run.add_argument("--persistent", action="store_true", help="code mode: keep variables between run_code calls (and chat turns)")
    add_model_args(run)
    run.add_argument("--prompts", choices=["standard", "local"], default=None,
                     help="mode prompts; local: short, example-led, for small models (default: local for "
                          "local presets, else standard)")
    run.add_argument("--no-recover", action="store_true",
                     help="do not recover tool calls (or code blocks) that a model wrote as text")
    run.add_argument("--runs-dir", default="runs", help="where JSONL traces go (default: ./runs)")
    run.add_argument("--no-trace", action="store_true", help="write no trace file")
    run.add_argument("--max-cost", type=budget_number, metavar="USD",
                     help="stop a run once it has cost this much (needs a known price)")
    run.add_argument("--max-total-tokens", type=positive_int, metavar="N",
                     help="stop a run once it has used this many tokens (prompt + completion, all requests)")
    run.add_argument("--timeout", type=budget_number, metavar="SECONDS", help="stop a run after this wall time")
    run.add_argument("--approve", choices=["ask", "all", "none"], default=None,
                     help="tool call approval: ask = ask in the terminal before every call (unless a policy says "
                          "deny), all = approve every call a policy asks about, none = refuse them; default: the "
                          "tools' and ~/.config/toolmode/config.toml's policies, asked in the terminal")
    run.add_argument("--otel", action="store_true",
                     help="export OpenTelemetry spans and metrics over OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT "
                          "(default http://localhost:4318; also TOOLMODE_OTEL=1; needs toolmode[otel])")


def _build_parser() -> argparse.ArgumentParser:
    from toolmode import __version__
    from toolmode.modes.registry import mode_names

    parser = OneLineParser(prog="toolmode", description="Run an agent in react, code or hybrid mode.")
    parser.add_argument("--version", action="version", version=f"toolmode {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run one task")
    run.add_argument("task")
    _add_agent_args(run)
    out = run.add_mutually_exclusive_group()
    out.add_argument("--quiet", action="store_true", help="print only the answer")
    out.add_argument("--json", action="store_true", help="print the result as JSON")
    _add_tool_args(run)

    chat = sub.add_parser("chat", help="an interactive conversation (Ctrl-C stops a turn, Ctrl-D leaves)")
    _add_agent_args(chat)
    _add_tool_args(chat)

    tools = sub.add_parser("tools", help="list tools, or rank them for a query: toolmode tools search QUERY")
    _add_tool_args(tools)
    tools.set_defaults(action="list")
    actions = tools.add_subparsers(dest="action")
    _add_tool_args(actions.add_parser("list", help="list the tools with their signatures"), nested=True)
    search = actions.add_parser("search", help="rank the tools for a query, with scores")
    search.add_argument("query", nargs="+", help="the query (quoted or not)")
    search.add_argument("-k", type=positive_int, default=10, help="how many tools to show (default: 10)")
    search.add_argument("--ranker", choices=["bm25", "fused"], default="bm25")
    _add_tool_args(search, nested=True)

    prompts = sub.add_parser("prompts", help="show what a mode tells the model: toolmode prompts show --mode code")
    prompt_actions = prompts.add_subparsers(dest="action", required=True)
    show = prompt_actions.add_parser("show", help="print a mode's system prompt, tool descriptions and policy texts")
    show.add_argument("--mode", choices=mode_names(), default="code")
    show.add_argument("--prompts", default="standard", metavar="VARIANT_OR_FOLDER",
                      help="standard, local, or a folder of prompt files overriding them (default: standard)")

    replay = sub.add_parser("replay", help="run a recorded trace again against its own replies; show the first "
                                           "request that differs")
    replay.add_argument("trace", help="a trace file (runs/*.jsonl)")
    replay.add_argument("--run", type=int, default=None, help="replay only this run of the file (0, 1, ...)")

    for name, help_text in (
        ("bench", "compare modes over N runs on a task suite"),
        ("demo", "scripted demo: no API key, no network"),
        ("scripted-server", "serve scripted replies on an OpenAI-compatible endpoint"),
        ("view", "look at runs and benches in a browser (served on 127.0.0.1)"),
    ):
        sub.add_parser(name, help=help_text, add_help=False)
    return parser


def _no_match(query: str, ranker: str) -> str:
    """What to print when no tool matches: the default ranker matches words, a semantic one meaning."""
    if ranker == "fused":
        return f"no tool matches {query!r}"
    from toolmode.tools.semantic import EXTRA_HINT, available_backends

    how = "add --ranker fused" if available_backends() else f"{EXTRA_HINT}, then add --ranker fused"
    return (f"no tool matches {query!r}: the default ranker matches words (English, and common Chinese tool "
            f"words). To rank by meaning, {how}.")


def _check_run_args(args: argparse.Namespace) -> None:
    """Refuse option combinations that cannot work before anything starts (tools, MCP servers, requests).

    Raises ValueError with a message in the CLI's own terms (options, not Python keyword arguments).
    """
    from toolmode.models.presets import preset_for

    if getattr(args, "task", None) is not None and not args.task.strip():
        raise ValueError('the task is empty: say what the agent should do, e.g. toolmode run "count the lines of a.txt"')
    if args.preset is not None:
        preset_for(args.preset)  # unknown preset: ValueError naming the choices
    if args.direct or args.search:
        from toolmode.modes.registry import option_names

        takes = option_names(args.mode)
        if args.direct and "direct" not in takes:
            raise ValueError(f"--direct is for --mode hybrid (in {args.mode} mode it has no meaning)")
        if args.search and "search" not in takes:
            raise ValueError(f"--search is for --mode react; in {args.mode} mode the model searches with "
                             "search_tools()")
    if args.base_url is not None:
        from urllib.parse import urlsplit

        parts = urlsplit(args.base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"--base-url {args.base_url!r}: expected an http(s) URL such as http://127.0.0.1:8080/v1")


def _load_tools(args: argparse.Namespace) -> list[Any]:
    tools: list[Any] = []
    if args.mcp_config and not args.allow_env_in_workspace:
        from toolmode.hostenv import config_refusal

        refusal = config_refusal(args.mcp_config, args.workspace, "the MCP config (--mcp-config)")
        if refusal:  # before any server starts
            raise ValueError(refusal)
    if args.mcp_config:
        _check_mcp_config(args.mcp_config)
    if not args.no_builtin:
        from toolmode.tools.builtin import builtin_tools

        tools += builtin_tools(args.workspace, allow_private_network=args.allow_private_network,
                               allow_env_in_workspace=args.allow_env_in_workspace)
    if args.mcp or args.mcp_config:
        from toolmode.mcp import mcp_tools, mcp_tools_from_config
        from toolmode.mcp.config import parse_spec

        seen: dict[str, int] = {}
        for spec in args.mcp:
            name = parse_spec(spec).name
            seen[name] = seen.get(name, 0) + 1
            # Two --mcp servers deriving the same name ("test") get test, test2, ... so prefixes stay unique.
            tools += mcp_tools(spec, name=name if seen[name] == 1 else f"{name}{seen[name]}",
                               workspace=args.workspace, allow_env_in_workspace=args.allow_env_in_workspace)
        if args.mcp_config:
            tools += mcp_tools_from_config(args.mcp_config, workspace=args.workspace,
                                           allow_env_in_workspace=args.allow_env_in_workspace)
    return tools


def _check_mcp_config(path: str) -> None:
    """Read and check the --mcp-config file before anything starts; a problem is one line naming the option."""
    from toolmode.mcp.config import load_config

    try:
        load_config(path)
    except OSError as exc:
        raise ValueError(f"--mcp-config {path}: {exc.strerror or exc}; give the path of an mcp.json file "
                         '({"mcpServers": {...}})') from None
    except ValueError as exc:
        detail = str(exc).removeprefix(f"MCP config {path}: ")
        raise ValueError(f"--mcp-config {path}: {detail}") from None


def _make_agent(args: argparse.Namespace, mode: str, *, console: bool = True, quiet: bool = False) -> Any:
    from toolmode.agent import Agent
    from toolmode.approval.terminal import cli_approval
    from toolmode.settings import (
        ModeSettings,
        OutputSettings,
        PromptSettings,
        SandboxSettings,
        settings_from_options,
    )

    model, limits = settings_from_options(vars(args))
    # a mode switched to in chat drops the options of the first mode that it does not take
    options = {k: v for k, v in (("search", args.search), ("direct", comma_list(args.direct)))
               if v is not None and mode == args.mode}
    tools = _load_tools(args)
    approval = getattr(args, "approval_session", None)
    if approval is None:  # one per session: an "always" answer holds across chat turns and mode switches
        approval = args.approval_session = cli_approval(args.approve, tools, args.workspace)
    rules, approver = approval
    return Agent(
        tools,
        ModeSettings(mode, visible=comma_list(args.visible), ranker=args.ranker, options=options),
        model=model,
        sandbox=SandboxSettings(args.workspace, args.sandbox, persistent=args.persistent,
                                allow_env_in_workspace=args.allow_env_in_workspace),
        limits=limits,
        output=OutputSettings(console=console, quiet=quiet, runs_dir=None if args.no_trace else args.runs_dir,
                              telemetry=True if args.otel else None),
        prompts=PromptSettings(variant=args.prompts),
        approval=rules,
        approver=approver,
    )


def _telemetry(args: argparse.Namespace) -> Any:
    """With --otel or TOOLMODE_OTEL: set up OTLP export; returns the function that flushes it at exit."""
    from toolmode.telemetry import SWITCH_ENV, env_flag, require_extra

    args.otel = args.otel or env_flag(SWITCH_ENV)
    if not args.otel:
        return lambda: None
    require_extra()
    from toolmode.otel.setup import configure_from_environment

    return configure_from_environment()


def _cmd_run(args: argparse.Namespace) -> int:
    _check_run_args(args)
    flush = _telemetry(args)
    try:
        with _make_agent(args, args.mode, console=not args.json, quiet=args.quiet) as agent:
            result = agent.run(args.task)
    finally:
        flush()
    if args.json:
        print(json_text(result.to_dict()))
    return 0 if result.ok else 1


def json_text(value: Any) -> str:
    """`value` as indented JSON that is safe on a terminal: readable non-ASCII text stays as it is, but
    what JSON leaves raw and a terminal may act on (C1 controls such as U+009B, an 8-bit CSI; bidi and
    other format characters; line separators; lone surrogates) is written as a \\u escape (same JSON)."""
    from toolmode.textsafe import needs_escape

    text = json.dumps(value, ensure_ascii=False, indent=2)
    if text.isascii():
        return text
    return "".join(json.dumps(c)[1:-1] if needs_escape(c) else c for c in text)  # astral ones: a surrogate pair


def _cmd_chat(args: argparse.Namespace) -> int:
    from toolmode.chat_cli import chat_loop

    _check_run_args(args)
    flush = _telemetry(args)
    try:
        return chat_loop(lambda mode: _make_agent(args, mode), args.mode)
    finally:
        flush()


def _cmd_tools(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from toolmode.console import safe as escape  # MCP servers name and describe their tools: escape it all
    from toolmode.modes.base import Catalog

    tools = list(Catalog(_load_tools(args)).tools.values())  # names as the model would see them
    console = Console(highlight=False)
    if args.action == "search":
        query = " ".join(args.query)
        from toolmode.tools.search import ToolIndex

        table = Table("rank", "score", "tool", "summary", title=f"search: {escape(query)}")
        for i, (t, score) in enumerate(ToolIndex(tools, args.ranker).ranked(query, k=args.k), 1):
            table.add_row(str(i), f"{score:.3f}", escape(t.name), escape(t.summary()))
        console.print(table if table.row_count else escape(_no_match(query, args.ranker)), soft_wrap=True)
        return 0
    table = Table("tool", "signature", "source", title=f"{len(tools)} tools")
    for t in tools:
        table.add_row(escape(t.name) + (" (deferred)" if t.deferred else ""), escape(t.signature()), escape(t.source))
    console.print(table)
    return 0


def _cmd_replay(args: argparse.Namespace) -> int:
    from toolmode.replay import replay
    from toolmode.textsafe import escape_control

    reports = replay(args.trace, args.run)
    for report in reports:
        print(escape_control(report.summary()))
    return 0 if all(r.identical for r in reports) else 1


def _cmd_prompts(args: argparse.Namespace) -> int:
    from toolmode.prompt_view import show_prompts

    print(show_prompts(args.mode, args.prompts))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `toolmode` command. Returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    _console_never_fails()
    if argv and argv[0] in ("bench", "demo", "scripted-server", "view"):
        return _delegate(argv[0], argv[1:])
    parser = _build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # said by the subcommand that was given, so its options are the ones suggested
        cast(OneLineParser, _chosen_parser(parser, args)).unrecognized(extra)
    try:
        commands = {"run": _cmd_run, "chat": _cmd_chat, "tools": _cmd_tools, "prompts": _cmd_prompts,
                    "replay": _cmd_replay}
        return commands[args.command](args)
    except KeyboardInterrupt:
        print("toolmode: interrupted; the trace keeps every finished step", file=sys.stderr)
        return 130
    except _model_error() as exc:
        print(f"toolmode: {error_line(exc)}", file=sys.stderr)
        return 2
    except (ValueError, OSError) as exc:
        print(f"toolmode: {error_line(exc)}", file=sys.stderr)
        return 2
    except _missing_extra() as exc:
        print(f"toolmode: {error_line(exc)}", file=sys.stderr)
        return 2
    except _sandbox_unavailable() as exc:
        print(f"toolmode: {error_line(exc)}", file=sys.stderr)
        return 2
    except _mcp_error() as exc:  # last: importing the MCP SDK to name its error class takes a while
        print(f"toolmode: {error_line(exc)}", file=sys.stderr)
        return 2


def _console_never_fails() -> None:
    """A terminal that cannot show a character (LANG=C, PYTHONIOENCODING=ascii) gets an escape, `\\xb7`,
    instead of a UnicodeEncodeError that would silence the step view."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "errors", "") == "strict":
            reconfigure(errors="backslashreplace")


def error_line(exc: BaseException) -> str:
    """A user-facing one-line message for an error: no Python class names, no traceback, no raw controls.

    OSErrors read as "No such file or directory: 'x'"; a bare OSError without strerror keeps its text.
    """
    from toolmode.textsafe import escape_control  # servers' and files' text reaches the terminal

    if isinstance(exc, OSError) and exc.strerror:
        where = f": {exc.filename!r}" if exc.filename is not None else ""
        return escape_control(f"{exc.strerror}{where}")
    return escape_control(" ".join(str(exc).split()) or type(exc).__name__)


def _model_error() -> type[Exception]:
    from toolmode.models.errors import ModelError

    return ModelError


def _mcp_error() -> type[Exception]:
    from toolmode.mcp import McpError

    return McpError


def _missing_extra() -> tuple[type[Exception], ...]:
    from toolmode.telemetry import MissingOtelExtra
    from toolmode.tools.semantic import MissingSemanticExtra

    return MissingSemanticExtra, MissingOtelExtra


def _sandbox_unavailable() -> type[Exception]:
    try:
        from toolmode.sandbox import SandboxUnavailable
    except ImportError:  # pragma: no cover - the sandbox package is part of toolmode
        return RuntimeError
    return SandboxUnavailable


def _delegate(command: str, argv: list[str]) -> int:
    if command == "bench":
        from toolmode.bench.cli import bench_main

        return bench_main(argv)
    if command == "view":
        from toolmode.view.cli import view_main

        return view_main(argv)
    if command == "demo":
        from toolmode.bench.demo import demo_main

        return demo_main(argv)
    from toolmode.testing.cli import main as server_main

    return server_main(argv, prog="toolmode scripted-server")


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

