"""benchmarks/peer_smolagents.py, the parts that decide what the evidence says (issue 18 analysis): an
episode the server timed out is not a result (a resumed run runs it again), and a suite tool with `*args` takes
the keyword the adapter lists it under (peer cheapest_new_york: `book_hotel(location=..., preferences=[...])`
raised TypeError). smolagents itself is not installed here; the adapter's own functions are tested."""

from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("peer_smolagents", REPO / "benchmarks" / "peer_smolagents.py")
assert spec is not None and spec.loader is not None
peer = importlib.util.module_from_spec(spec)
spec.loader.exec_module(peer)


def book_hotel(location: str, *preferences: str) -> list[str]:
    """The suite's travel tool shape."""
    return [location, *preferences]


def test_a_varargs_keyword_is_spread_as_positional_arguments() -> None:
    kwargs = {"preferences": ["wifi", "pool"]}
    args = peer.spread_varargs("preferences", ["location"], ("Paris",), kwargs)
    assert book_hotel(*args, **kwargs) == ["Paris", "wifi", "pool"] and kwargs == {}
    assert peer.spread_varargs("preferences", ["location"], ("Paris",), {"preferences": "wifi"}) == ("Paris", "wifi")
    assert peer.spread_varargs("preferences", ["location"], ("Paris", "wifi"), {}) == ("Paris", "wifi")
    assert peer.spread_varargs(None, [], ("x",), {"y": 1}) == ("x",)


def test_a_parameter_before_varargs_given_by_name_moves_to_its_place() -> None:
    """The peer's re-run of cheapest_new_york_trip: `book_hotel(location="C", preferences=["wifi", "pool"])`
    raised "got multiple values for argument 'location'" when only the varargs were spread."""
    kwargs = {"location": "C", "preferences": ["wifi", "pool"]}
    args = peer.spread_varargs("preferences", ["location"], (), kwargs)
    assert book_hotel(*args, **kwargs) == ["C", "wifi", "pool"] and kwargs == {}


def test_a_server_timeout_is_not_a_finished_episode() -> None:
    assert not peer.finished({"task": "t", "error": "AgentGenerationError: Error in generating model output:\nRequest timed out."})
    assert not peer.finished({"task": "t", "error": "APIConnectionError: Connection error."})
    assert peer.finished({"task": "t", "error": None, "solved": False})
    assert peer.finished({"task": "t", "error": "AgentMaxStepsError: Reached max steps."})


def test_only_the_leading_parameters_given_by_name_in_order_move() -> None:
    def f(a: str, b: str = "B", *rest: int) -> tuple[str, str, tuple[int, ...]]:
        return a, b, rest

    kwargs = {"b": "x", "rest": [1, 2]}  # `a` is missing: `b` must not slide into its place
    args = peer.spread_varargs("rest", ["a", "b"], (), kwargs)
    assert args == (1, 2) and kwargs == {"b": "x"}  # the call then fails loudly, as it should
