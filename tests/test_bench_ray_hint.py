"""The install hint when Ray is missing must work from a checkout (toolmode is not a PyPI package)."""

from __future__ import annotations

import sys

import pytest

from toolmode.bench.ray_executor import ExecutorError, require_ray


def test_missing_ray_hint_installs_from_the_checkout(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    with pytest.raises(ExecutorError) as info:
        require_ray()
    message = str(info.value)
    assert "pip install -e '.[ray]'" in message
    assert "toolmode[ray]" not in message  # would fetch an unrelated "toolmode" from the registry
    assert "\n" not in message
