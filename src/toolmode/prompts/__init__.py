"""Prompts as data: every text the model reads, named, in one TOML file per mode plus `policies.toml`.

A mode's prompt set is `policies.toml`, then the mode's own files (hybrid: `code.toml`, then `hybrid.toml`),
each file's `[local]` table laid over it for the variant for small local models, then the user's
overrides: `prompts=` a mapping of names to texts, or a folder holding files named like the packaged ones
(any subset of names). Texts are `string.Template` templates (`$name`, `$$` for a dollar sign). An unknown
name, a missing field or a bad template is a `PromptError` naming the prompt.

`toolmode prompts show --mode code` prints what a mode would send.
"""

from __future__ import annotations

import string
import tomllib
from collections.abc import Iterable, Mapping
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from toolmode.errors import ToolmodeError

VARIANTS = ("standard", "local")
POLICIES = "policies.toml"


class PromptError(ToolmodeError, ValueError):
    """A prompt set or a prompt could not be used: unknown name, missing field, unreadable file."""


def packaged(name: str) -> Traversable:
    """A prompt file shipped with toolmode (`policies.toml`, `react.toml`, `code.toml`, `hybrid.toml`)."""
    return files("toolmode.prompts") / name


class PromptSet:
    """Named templates; `text(name, **fields)` fills one in."""

    def __init__(self, texts: Mapping[str, str], variant: str = "standard") -> None:
        self.variant = variant
        self._templates = {name: string.Template(text) for name, text in texts.items()}

    @classmethod
    def load(cls, sources: Iterable[Traversable | Path], variant: str = "standard",
             overrides: Mapping[str, str] | Path | str | None = None,
             defaults: Mapping[str, str] | None = None) -> PromptSet:
        """The set read from `sources` in order (later names replace earlier ones), with `variant`'s table
        laid over each, then `defaults` (more texts, e.g. a mode's own), then `overrides` (a mapping, or a
        folder with files named like the sources)."""
        if variant not in VARIANTS:
            raise PromptError(f"unknown prompt variant {variant!r}; choose one of: {', '.join(VARIANTS)}")
        sources = list(sources)
        texts: dict[str, str] = {}
        for source in sources:
            texts.update(_read(source, variant))
        texts.update(defaults or {})
        if isinstance(overrides, (str, Path)):
            folder = Path(overrides)
            if not folder.is_dir():
                raise PromptError(f"prompts folder {str(folder)!r} does not exist or is not a folder")
            overrides = {}
            for source in sources:
                if (folder / source.name).is_file():
                    overrides.update(_read(folder / source.name, variant))
        for name, text in (overrides or {}).items():
            if name not in texts:
                raise PromptError(f"unknown prompt name {name!r}; known: {', '.join(sorted(texts))}")
            if not isinstance(text, str):
                raise PromptError(f"prompt {name!r} must be a string, not {type(text).__name__}")
            texts[name] = text
        return cls(texts, variant)

    def names(self) -> list[str]:
        """The prompt names, sorted."""
        return sorted(self._templates)

    def template(self, name: str) -> str:
        """The raw template of `name`."""
        return self._get(name).template

    def text(self, prompt: str, /, **fields: Any) -> str:
        """The template `prompt` with `fields` filled in."""
        try:
            return self._get(prompt).substitute(fields)
        except KeyError as exc:
            raise PromptError(f"prompt {prompt!r} uses ${exc.args[0]}, which is not one of its fields "
                              f"({', '.join(sorted(fields)) or 'none'})") from None
        except ValueError as exc:
            raise PromptError(f"prompt {prompt!r} is not a valid template ({exc}); write $$ for a dollar sign") from None

    def _get(self, name: str) -> string.Template:
        try:
            return self._templates[name]
        except KeyError:
            raise PromptError(f"no prompt named {name!r} in this set; known: {', '.join(self.names())}") from None


def _read(source: Traversable | Path, variant: str) -> dict[str, str]:
    try:
        data = tomllib.loads(source.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise PromptError(f"cannot read the prompt file {source}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise PromptError(f"the prompt file {source} is not valid TOML: {exc}") from None
    layer = data.pop(variant, {}) if variant != "standard" else {}
    texts = {name: value for name, value in data.items() if not isinstance(value, dict)}
    texts.update(layer)
    bad = [name for name, value in texts.items() if not isinstance(value, str)]
    if bad:
        raise PromptError(f"prompt file {source}: {', '.join(bad)} must be strings")
    return texts
