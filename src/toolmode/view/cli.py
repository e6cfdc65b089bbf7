"""`toolmode view [FOLDER]`: serve the folder's runs and benches on 127.0.0.1 until Ctrl-C."""

from __future__ import annotations

import argparse
import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be 0 to 65535, got {value}")
    return value


def build_parser(prog: str = "toolmode view") -> argparse.ArgumentParser:
    """The command's options."""
    from toolmode.cliargs import OneLineParser  # a usage error is one line, as in every toolmode command

    p = OneLineParser(prog=prog, description="Look at runs and benches in a browser (served on 127.0.0.1).")
    p.add_argument("folder", nargs="?", default="runs",
                   help="a folder of traces, a bench folder, or one trace file (default: runs)")
    p.add_argument("--port", type=_port, default=0, help="port on 127.0.0.1 (default: a free one)")
    p.add_argument("--no-browser", action="store_true", help="print the address; do not open a browser")
    return p


def can_open_browser() -> bool:
    """Whether `webbrowser` would open a graphical browser rather than take over this terminal.

    On Linux without a display, Python's webbrowser falls back to text browsers (lynx, w3m) in the terminal
    that runs the server; there the address is printed instead. $BROWSER is the user's own choice.
    """
    if os.environ.get("BROWSER"):
        return True
    if sys.platform.startswith("linux") or "bsd" in sys.platform:
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


def _why(exc: OSError) -> str:
    """An OS error in one line, without the class name (as the other commands print them)."""
    from toolmode.textsafe import escape_control

    where = f": {exc.filename!r}" if exc.filename is not None else ""
    return escape_control(f"{exc.strerror}{where}" if exc.strerror else " ".join(str(exc).split()))


def view_main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `toolmode view`; returns the exit status (0 after Ctrl-C, 2 on a refusal)."""
    args = build_parser().parse_args(argv)
    from toolmode.textsafe import escape_control
    from toolmode.view.folder import Folder
    from toolmode.view.server import ViewServer

    route = ""
    given = Path(args.folder)
    if given.suffix == ".jsonl" and given.is_file():  # one trace: serve its folder, open on its page
        route = "#/run?path=" + quote(given.name, safe="")
        given = given.parent
    try:
        folder = Folder(given)
    except FileNotFoundError:
        hint = " (toolmode run writes its traces to ./runs)" if args.folder == "runs" else ""
        print(f"toolmode view: no folder {args.folder!r} here{hint}; name one: toolmode view PATH", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"toolmode view: {_why(exc)}", file=sys.stderr)
        return 2
    try:
        server = ViewServer(folder, args.port)
    except OSError as exc:
        folder.close()
        print(f"toolmode view: cannot serve on 127.0.0.1:{args.port}: {_why(exc)}", file=sys.stderr)
        return 2
    url = server.url + route
    try:  # from the first line printed on, Ctrl-C is a normal stop
        print(f"toolmode view: {escape_control(str(folder.path))} on {url} (Ctrl-C stops)", flush=True)
        if not args.no_browser:
            if can_open_browser():
                import webbrowser

                threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()
            else:
                print("toolmode view: no graphical browser here: open the address above in one", flush=True)
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        print("toolmode view: stopped", file=sys.stderr)
    finally:
        server.server_close()
        folder.close()
    return 0
