"""Command-line argument helpers shared by every `toolmode` command: the one-line parser, argparse types and
the model options. A leaf module (standard library only), so the bench, the viewer, the scripted server and
the main CLI all import it and none of them imports another."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import NoReturn


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line: what is wrong (naming the option, with the nearest known
    option for a misspelt one) and where to read more, exit status 2. The usage block is for --help."""

    def error(self, message: str) -> NoReturn:
        """Print `PROG: error: MESSAGE (see PROG --help)` on one line and exit with status 2."""
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    def unrecognized(self, extra: Sequence[str]) -> NoReturn:
        """The error for arguments no option took, with the nearest option of this parser for each."""
        import difflib

        known = [o for o in self._option_string_actions if o.startswith("--")]
        hints = [f"{word} (did you mean {near[0]}?)" if word.startswith("-") and (near := difflib.get_close_matches(
            word.split("=", 1)[0], known, n=1, cutoff=0.6)) else word for word in extra]  # options only
        self.error(f"unrecognized argument{'s' if len(extra) > 1 else ''}: {' '.join(hints)}")


def positive_int(text: str) -> int:
    """argparse type: a whole number, 1 or more."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def non_negative_int(text: str) -> int:
    """argparse type: a whole number, 0 or more."""
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def budget_number(text: str) -> float:
    """argparse type: a finite number above 0 (a budget: --max-cost, --timeout)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be more than 0, got {text}")
    return value


def positive_float(text: str) -> float:
    """argparse type: a number above 0."""
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be above 0, got {text}")
    return value


def temperature(text: str) -> float:
    """argparse type: a sampling temperature, 0 to 2."""
    value = float(text)
    if not 0 <= value <= 2:
        raise argparse.ArgumentTypeError(f"must be between 0 and 2, got {text}")
    return value


def add_model_args(p: argparse.ArgumentParser) -> None:
    """--temperature, --max-tokens (a cap per reply), --request-timeout (shared by `run` and `bench`)."""
    p.add_argument("--temperature", type=temperature, default=None, help="sampling temperature (server default if unset)")
    p.add_argument("--max-tokens", type=positive_int, default=None,
                   help="cap on generated tokens per reply (the run's budget is --max-total-tokens)")
    p.add_argument("--request-timeout", type=positive_float, default=None,
                   help="seconds one model request may take, streamed or not (default: 120; CPU servers with "
                        "long prompts or long replies need more)")


def comma_list(value: str | None) -> list[str] | None:
    """`"a, b,c"` -> `["a", "b", "c"]`; None or "" -> None (the option was not given)."""
    return [n.strip() for n in value.split(",") if n.strip()] if value else None
