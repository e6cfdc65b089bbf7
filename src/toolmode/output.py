"""Structured answers: `output_type=` (a pydantic model, dataclass, TypedDict, or any type pydantic knows).

The model is told the JSON schema its final answer must follow; the answer is parsed (a ```json fence
is accepted) and validated with a pydantic `TypeAdapter`. A mismatch goes back to the model once with
the validation error; a second mismatch ends the run with `stopped="error"`, the last answer kept.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pydantic

RETRIES = 1
_FENCE = re.compile(r"^\s*```(?:json|JSON)?\s*\n(.*?)\n?```\s*$", re.DOTALL)


class OutputSpec:
    """Validates final answers against `output_type`."""

    def __init__(self, output_type: Any) -> None:
        try:
            self.adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(output_type)
            self.schema = self.adapter.json_schema()
        except (pydantic.PydanticSchemaGenerationError, pydantic.PydanticUserError, TypeError) as exc:
            reason = str(exc).splitlines()[0].split(". Set `arbitrary_types_allowed")[0]  # not the user's config
            raise ValueError(f"output_type {output_type!r} cannot be validated: {reason}") from None
        self.output_type = output_type
        self.name = getattr(output_type, "__name__", str(output_type))

    def instructions(self) -> str:
        """The system-prompt paragraph describing the answer format."""
        schema = json.dumps(self.schema, ensure_ascii=False)
        return (f"When you give the final answer, reply with only a JSON value (no other text) that matches "
                f"this JSON schema ({self.name}): {schema}")

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

    def correction(self, problems: str) -> str:
        """The user message that sends a mismatch back to the model."""
        return (f"Your answer does not match the required format ({self.name}): {problems}. Reply again with "
                f"only a JSON value matching the schema.")


def _problems(exc: pydantic.ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in err['loc']) or '(answer)'}: {err['msg']}" for err in exc.errors()[:10])
