"""The one base of toolmode's own errors.

Every error toolmode raises on purpose is a `ToolmodeError` (catch it to catch them all); each also keeps
the standard class it always was (`ValueError`, `PermissionError`, `RuntimeError`, ...), so existing
`except` clauses still match. Its message is one line, fit to show a user.
"""

from __future__ import annotations


class ToolmodeError(Exception):
    """Base of every error toolmode raises on purpose."""


class SettingsConflict(ToolmodeError, ValueError):
    """The same setting was given twice, in a settings object and as a keyword."""
