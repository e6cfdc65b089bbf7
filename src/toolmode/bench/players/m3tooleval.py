"""Scripted players for M3ToolEval tasks: one answers with the task's expected output, one answers wrongly.

They test the harness (tool conversion, loop, answer extraction and the suite's own checker), not a model.
"""

from __future__ import annotations

from typing import Any

from toolmode.bench.players.base import Play, Player, PlayerGen


def wrong_answer(expected: Any) -> str:
    """An answer the suite's checker must reject: a different number, the other truth value, or a refusal."""
    if isinstance(expected, bool):
        return str(not expected)
    if isinstance(expected, int | float):
        return str(expected + 1)
    return "no answer found"


def expected_output_player(expected: Any) -> Player:
    """A player that replies `Answer: <expected output>` (failing: a wrong answer), in every mode."""

    def play(p: Play) -> PlayerGen:
        return f"Answer: {wrong_answer(expected) if p.failing else expected}"
        yield  # a generator that makes no tool call

    return play
