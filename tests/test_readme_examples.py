"""The README's "Building applications" examples run as written against the scripted server."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXPECTED = {  # what each example prints (its comments say so)
    "README.md": ["10 True\n4 2\n", "The sum is 5.", "A and B\n", "budget timeout 1\n",
                  "City(name='Paris', population=2100000)\n", "hi\n"],
}
EXPECTED["README.zh-CN.md"] = EXPECTED["README.md"]


def examples(readme: str) -> list[str]:
    """The Python blocks of the applications section (the ones that start a scripted server)."""
    text = (ROOT / readme).read_text(encoding="utf-8")
    start = re.search(r"^## (Building applications|构建应用)\n", text, re.MULTILINE)
    assert start is not None, f"{readme} has no applications section"
    end = re.search(r"^## ", text[start.end():], re.MULTILINE)
    section = text[start.end(): start.end() + end.start() if end else len(text)]
    return re.findall(r"```python\n(.*?)```", section, re.DOTALL)


@pytest.mark.parametrize("readme", ["README.md", "README.zh-CN.md"])
def test_application_examples_run(readme: str, tmp_path: Path) -> None:
    blocks = examples(readme)
    assert len(blocks) == len(EXPECTED[readme])
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    for code, expected in zip(blocks, EXPECTED[readme], strict=True):
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                              cwd=tmp_path, env=env)
        assert proc.returncode == 0, f"{code}\n{proc.stderr}"
        assert expected in proc.stdout, f"{code}\n---\n{proc.stdout}"
    assert list(tmp_path.iterdir()) == []  # quiet by default: no ./runs
