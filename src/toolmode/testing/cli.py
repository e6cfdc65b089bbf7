"""Command line for the scripted model server (also wired as `toolmode scripted-server`)."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path

from toolmode.testing.script import ScriptError
from toolmode.testing.server import ScriptedModelServer


def build_parser(prog: str = "python -m toolmode.testing") -> argparse.ArgumentParser:
    """The argument parser of the scripted server command."""
    from toolmode.cliargs import OneLineParser

    parser = OneLineParser(
        prog=prog,
        description="Serve an OpenAI-compatible chat completions endpoint on 127.0.0.1 that replays a script.",
    )
    parser.add_argument(
        "--script", required=True, type=Path, help="JSON file holding the list of script items"
    )
    parser.add_argument("--port", type=int, default=0, help="port to listen on (default: a free one)")
    parser.add_argument("--usage-style", choices=("deepseek", "openai"), default="deepseek")
    parser.add_argument(
        "--cache-block", type=int, default=0, help="round cached tokens down to this multiple"
    )
    parser.add_argument("--model", default="scripted-model", help="model id reported by /v1/models")
    return parser


def main(argv: list[str] | None = None, prog: str = "python -m toolmode.testing") -> int:
    """Run the server until Ctrl-C or SIGTERM; print the base URL first. Returns the exit code."""
    args = build_parser(prog).parse_args(argv)
    try:
        items = json.loads(args.script.read_text(encoding="utf-8"))
        if not isinstance(items, list):
            raise ScriptError("the script file must hold a JSON list of items")
        server = ScriptedModelServer(
            items, args.usage_style, cache_block=args.cache_block, model=args.model, port=args.port
        )
        base_url = server.start()
    except OSError as exc:
        print(f"error: cannot read the script file {str(args.script)!r}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except ValueError as exc:  # ScriptError and JSONDecodeError are ValueErrors
        print(f"error: bad script file {str(args.script)!r}: {exc} (format: docs/scripted-server.md)",
              file=sys.stderr)
        return 2
    print(base_url, flush=True)
    print(f"serving {len(items)} scripted replies; Ctrl-C to stop", file=sys.stderr, flush=True)
    stop = threading.Event()
    previous = None
    if threading.current_thread() is threading.main_thread():  # signal handlers only work there
        previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        while not stop.wait(1.0):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return 0
