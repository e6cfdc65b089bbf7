"""Sandbox host (work in progress: the worker lands in the next commit)."""

from __future__ import annotations

from .spec import SandboxUnavailable


class Sandbox:
    """Placeholder until the worker lands: refuses to run anything (fails closed)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        raise SandboxUnavailable("the code sandbox is not implemented yet")
