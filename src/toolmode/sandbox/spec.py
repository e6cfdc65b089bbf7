"""The sandbox's public data types: limits, tool stubs, handles, results, and the unavailable error."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from toolmode.errors import ToolmodeError


class SandboxUnavailable(ToolmodeError, RuntimeError):
    """No confinement mechanism is available for the requested policy (the sandbox fails closed)."""


class UnsafeWorkspace(SandboxUnavailable):
    """The workspace holds the host's Python environment: confined code could plant code the host runs."""


@dataclass(frozen=True)
class SandboxLimits:
    """Per-run limits. `cpu_seconds=None` means the wall `timeout` (rounded up). `max_write_mb`: how much one
    run may write (what its own processes and tools wrote, its private /tmp included; see budget.py).
    `max_tasks` (threads) and `memory_mb` also bound the worker as a whole where a cgroup can be made."""

    timeout: float = 30.0
    cpu_seconds: int | None = None
    memory_mb: int = 1024
    file_size_mb: int = 64
    open_files: int = 256
    max_output: int = 4000
    max_tool_calls: int = 200
    max_frame_bytes: int = 4 * 1024 * 1024
    max_write_mb: int = 512
    max_tasks: int = 128

    def cpu(self) -> int:
        """CPU seconds allowed per run."""
        return self.cpu_seconds if self.cpu_seconds is not None else max(1, int(self.timeout + 0.999))


@dataclass(frozen=True)
class StubSpec:
    """A tool offered to the program: positional arguments map to `params` in order.

    With `varargs` (one of `params`), positional arguments beyond those before it are collected into a list
    under that name, as Python's `*args` does.
    """

    name: str
    params: list[str]
    signature: str
    doc: str = ""
    varargs: str | None = None

    def to_json(self) -> dict[str, object]:
        """The form sent to the worker."""
        out: dict[str, object] = {"name": self.name, "params": list(self.params), "signature": self.signature,
                                  "doc": self.doc}  # fmt: skip
        if self.varargs:
            out["varargs"] = self.varargs
        return out


@dataclass(frozen=True)
class Handles:
    """Returned by a host `call` to hand the program callable handles for these tools."""

    specs: list[StubSpec] = field(default_factory=list)

    def __iter__(self) -> Iterator[StubSpec]:
        return iter(self.specs)

    def __len__(self) -> int:
        return len(self.specs)


EMPTY_OUTPUT = "(no output -- use print() to return results)"


REPAIRED_WITH = "; it ran with "  # in a repair note (worker.compile_program), before what was changed


@dataclass
class CodeResult:
    """The outcome of one program: captured output (already capped and escaped) and the error, if any."""

    output: str = ""
    error: str | None = None
    line: int | None = None
    truncated: bool = False
    calls: int = 0
    timed_out: bool = False
    reset: bool = False
    repaired: str | None = None  # what was changed to make the program parse (worker.compile_program)
    skipped: tuple[str, ...] = ()  # tools whose empty definitions in the program were skipped (worker.tool_definitions)
    redefined: tuple[str, ...] = ()  # tool names the program gave code of its own (worker.tool_definitions)
    written: int = 0  # bytes charged to the run's write budget (budget.py)

    def text(self) -> str:
        """What the model sees: the output, then the error (a hint when there is neither), then one short line
        when the program was repaired to parse. The note goes last: the 1.5B answered a note that came first
        (issue 18, code budget_trip); the trace keeps the whole note as a Notice."""
        parts = [p for p in (self.output.rstrip("\n"), self.error) if p] or [EMPTY_OUTPUT]
        if self.repaired:
            parts.append(f"[note: repaired to parse: {self.repaired.rsplit(REPAIRED_WITH, 1)[-1]}]")
        if self.skipped:
            names = ", ".join(self.skipped)
            parts.append(f"[note: your empty definitions of {names} were skipped: those are the tools, call them "
                         "without defining them]")
        if self.redefined and self.calls == 0:
            names = ", ".join(self.redefined)
            parts.append(f"[note: your program replaced the tools {names} with its own code and called no tool: "
                         "call the tools themselves]")
        return "\n".join(parts)
