"""Structured answers: `output_type=` (a pydantic model, dataclass, TypedDict, or any type pydantic knows).

The model is told the JSON schema its final answer must follow; the answer is parsed (a ```json fence
is accepted) and validated with a pydantic `TypeAdapter`. The reply policy `policies.OutputFormat` sends
a mismatch back to the model once; a second mismatch ends the run with `stopped="error"`, the last answer kept.
"""

from __future__ import annotations

import functools
import inspect
import json
import re
from typing import TYPE_CHECKING, Any

import pydantic

if TYPE_CHECKING:
    from toolmode.prompts import PromptSet

RETRIES = 1
_FENCE = re.compile(r"^\s*```(?:json|JSON)?\s*\n(.*?)\n?```\s*$", re.DOTALL)


class OutputSpec:
    """Validates final answers against `output_type`."""

    def __init__(self, output_type: Any) -> None:
        _check_type(output_type)
        try:
            self.adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(output_type)
            self.schema = self.adapter.json_schema()
        except (pydantic.PydanticSchemaGenerationError, pydantic.PydanticUserError, TypeError) as exc:
            reason = str(exc).splitlines()[0].split(". Set `arbitrary_types_allowed")[0]  # not the user's config
            raise ValueError(f"output_type {output_type!r} cannot be validated: {reason}") from None
        self.output_type = output_type
        self.name = getattr(output_type, "__name__", str(output_type))

    def instructions(self, prompts: PromptSet | None = None) -> str:
        """The paragraph added to the task that describes the answer format (the prompt set's
        `output_instructions`)."""
        schema = json.dumps(self.schema, ensure_ascii=False)
        if prompts is None:
            from toolmode.prompts import POLICIES, PromptSet, packaged

            prompts = PromptSet.load([packaged(POLICIES)])
        return prompts.text("output_instructions", name=self.name, schema=schema)

    def parse(self, text: str) -> tuple[Any, str | None]:
        """(value, None) when `text` is a valid answer, else (None, a one-paragraph error for the model)."""
        m = _FENCE.match(text)
        body = m.group(1) if m else text.strip()
        try:
            return self.adapter.validate_json(body), None
        except pydantic.ValidationError as exc:
            if self.schema.get("type") == "string" and exc.errors()[0]["type"] == "json_invalid":
                return self._plain_text(body)  # `str` (or a string Literal): bare text is fine, quotes optional

            return None, _problems(exc)

    def _plain_text(self, body: str) -> tuple[Any, str | None]:
        try:
            return self.adapter.validate_python(body), None
        except pydantic.ValidationError as exc:
            return None, _problems(exc)


def _check_type(output_type: Any) -> None:
    """ValueError for what pydantic would accept but every answer would then fail, or match anything:
    a function or lambda (pydantic validates its arguments), `object` / `Any`, a type's name as a string."""
    if output_type is object or output_type is Any:
        raise ValueError(f"output_type {output_type!r} matches any JSON and no plain answer: give the type of the "
                         "answer (a pydantic model, dataclass, TypedDict, list[int], Literal[...], ...)")
    if isinstance(output_type, str):
        raise ValueError(f"output_type {output_type!r} is a name: give the type itself")
    if inspect.isroutine(output_type) or isinstance(output_type, functools.partial):
        raise ValueError(f"output_type {output_type!r} is a function: give the type of the answer "
                         "(a pydantic model, dataclass, TypedDict, list[int], ...)")


def _problems(exc: pydantic.ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in err['loc']) or '(answer)'}: {err['msg']}" for err in exc.errors()[:10])
