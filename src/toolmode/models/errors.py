"""The model seam's errors (a module of its own, so the loop and other models need not import the HTTP client)."""

from __future__ import annotations

from toolmode.errors import ToolmodeError


class ModelError(ToolmodeError, RuntimeError):
    """A model request failed for good; the message is one line, fit to show a user."""


class MissingApiKey(ModelError):
    """The endpoint needs an API key and none was found."""
