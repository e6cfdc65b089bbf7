"""Command-line argument helpers shared by `toolmode run/chat` and `toolmode bench`: argparse types and the
model options. A leaf module (standard library only), so the bench and the main CLI both import it and
neither imports the other."""

from __future__ import annotations

import argparse


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
                   help="seconds one model request may take (default: 120; CPU servers with long prompts need more)")


def comma_list(value: str | None) -> list[str] | None:
    """`"a, b,c"` -> `["a", "b", "c"]`; None or "" -> None (the option was not given)."""
    return [n.strip() for n in value.split(",") if n.strip()] if value else None
