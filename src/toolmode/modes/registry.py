"""The modes by name. The Agent, the command line (`--mode`, chat's `/mode`) and the bench (`--modes`)
read this registry and nothing else, so a mode defined in one file and registered with `@register_mode`
is offered everywhere.

The built-in modes are imported when first asked for (code mode loads the sandbox); modes of other
packages are found through the `toolmode.modes` entry-point group (`name = "package.module:ModeClass"`).
"""

from __future__ import annotations

import dataclasses
import importlib
import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from toolmode.modes.base import Mode, ModeSetup

M = TypeVar("M", bound="type[Mode]")

BUILTIN = {
    "react": "toolmode.modes.react:ReactMode",
    "code": "toolmode.modes.code:CodeMode",
    "hybrid": "toolmode.modes.hybrid:HybridMode",
}
ENTRY_POINTS = "toolmode.modes"

_registered: dict[str, type[Mode]] = {}
_lock = threading.Lock()
_plugins_loaded = False


def register_mode(cls: M) -> M:
    """Class decorator: offer the mode `cls` under `cls.name` (a later registration of the name replaces it)."""
    name = getattr(cls, "name", "")
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"a mode's name must be a word such as 'react', not {name!r}")
    with _lock:
        _registered[name] = cls
    return cls


def mode_names() -> list[str]:
    """Every mode offered: the built-in ones first, then those registered or installed, in order."""
    _load_plugins()
    return [*BUILTIN, *(n for n in _registered if n not in BUILTIN)]


def mode_class(name: str) -> type[Mode]:
    """The class registered as `name`; ValueError naming the choices otherwise."""
    if name in _registered:
        return _registered[name]
    if name in BUILTIN:
        module, _, attr = BUILTIN[name].partition(":")
        cls: type[Mode] = getattr(importlib.import_module(module), attr)
        return _registered.setdefault(name, cls)
    _load_plugins()
    if name not in _registered:
        raise ValueError(f"unknown mode {name!r}; choose one of: {', '.join(mode_names())}")
    return _registered[name]


def option_names(name: str) -> list[str]:
    """The names of mode `name`'s own options."""
    return [f.name for f in dataclasses.fields(mode_class(name).Options)]


def make_options(name: str, options: Mapping[str, Any]) -> Any:
    """`mode_class(name).Options(**options)`, or a ValueError naming the option and the mode it is for."""
    cls = mode_class(name)
    own = option_names(name)
    for key in options:
        if key not in own:
            others = [m for m in BUILTIN if m != name and key in option_names(m)]
            where = f"; it is for {' and '.join(others)} mode" if others else ""
            raise ValueError(f"{key}= is neither an Agent setting nor an option of {name} mode "
                             f"(its options: {', '.join(own) or 'none'}){where}")
    return cls.Options(**options)


def build_mode(name: str, tools: Iterable[Any], setup: ModeSetup, options: Mapping[str, Any]) -> Mode:
    """Mode `name` for these tools, settings and options."""
    cls = mode_class(name)
    return cls.build(list(tools), setup, make_options(name, options))


def _load_plugins() -> None:
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    from importlib.metadata import entry_points

    for entry in entry_points(group=ENTRY_POINTS):
        if entry.name not in _registered and entry.name not in BUILTIN:
            register_mode(entry.load())
