"""Where the loop's per-step CPU goes: this tree against copies of it with one guarantee taken out each.

    python benchmarks/loop_overhead_parts.py [BASE_TREE] --reps 15

Each variant is a copy of this checkout's `src` with one small source patch (the patches are below, as text
replacements; the script stops if one no longer applies), measured with loop_overhead_compare.py's interleaved
runs (20 steps, 50 tools, run driver), against BASE_TREE when given (e.g. a `git archive 26c2b24` tree):

- `no-trace-file`: the JSONL sink writes nothing (events are still built and published);
- `no-message-lines`: the trace leaves out the `message` lines of replies and tool results (the trajectory's
  copies of what the `reply` and `tool_result` lines hold);
- `no-redaction`: trace lines are written without credential redaction;
- `same-thread`: a reply's single tool call runs on the loop's thread and the model request is read on it too
  (neither can then be abandoned at a deadline or a cancellation);
- `lean`: `no-trace-file` and `same-thread` together.

These are measurements, not options: each variant drops something toolmode promises.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"

NO_TRACE = ("toolmode/trace.py", "        if event.kind in DELTA_KINDS:\n            return",
            "        return")
NO_MESSAGES = ("toolmode/trace.py", "        if event.kind in DELTA_KINDS:\n            return",
               "        if event.kind in DELTA_KINDS or (event.kind == \"message\" and getattr(event, \"source\", None)"
               " in (\"reply\", \"tool\")):\n            return")
NO_REDACTION = ("toolmode/hostfiles.py", "        self._file.write(redact(text))\n        if flush:",
                "        self._file.write(text)\n        if flush:")
INLINE_CALL = ("toolmode/calls.py", "    for i in range(len(calls)):\n        context",
               "    if len(calls) == 1:\n        work(0)\n        deliver([results[0]])\n        return\n"
               "    for i in range(len(calls)):\n        context")
INLINE_REQUEST_1 = ("toolmode/models/bounded.py", "        self.started = time.monotonic()\n        workers.submit(self._work)\n",
                    "        self.started = time.monotonic()\n")
INLINE_REQUEST_2 = ("toolmode/models/bounded.py", "    def __iter__(self) -> Iterator[T]:\n",
                    "    def __iter__(self) -> Iterator[T]:\n        yield from self._produce(self._exchange)\n        return\n")

VARIANTS = {
    "no-trace-file": [NO_TRACE],
    "no-message-lines": [NO_MESSAGES],
    "no-redaction": [NO_REDACTION],
    "same-thread": [INLINE_CALL, INLINE_REQUEST_1, INLINE_REQUEST_2],
    "lean": [NO_TRACE, INLINE_CALL, INLINE_REQUEST_1, INLINE_REQUEST_2],
}


def make_variant(root: Path, name: str, patches: list[tuple[str, str, str]]) -> Path:
    """A copy of this checkout's src under root/name with `patches` applied (each must apply exactly once)."""
    tree = root / name
    shutil.copytree(SRC, tree / "src", ignore=shutil.ignore_patterns("__pycache__"))
    for rel, old, new in patches:
        path = tree / "src" / rel
        text = path.read_text()
        if text.count(old) != 1:
            raise SystemExit(f"{name}: the patch for {rel} no longer applies (the source changed): update it")
        path.write_text(text.replace(old, new))
    return tree


def main() -> None:
    """Build the variants and run the interleaved comparison."""
    parser = argparse.ArgumentParser()
    parser.add_argument("base", nargs="?", type=Path, help="a tree to compare with first (e.g. an older commit)")
    parser.add_argument("--reps", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="toolmode-parts-") as tmp:
        root = Path(tmp)
        trees = [make_variant(root, "this-tree", [])] + [make_variant(root, n, p) for n, p in VARIANTS.items()]
        if args.base is not None:
            trees.insert(0, args.base.resolve())
        subprocess.run([sys.executable, str(HERE / "loop_overhead_compare.py"), *map(str, trees),
                        "--reps", str(args.reps)], check=True)


if __name__ == "__main__":
    main()
