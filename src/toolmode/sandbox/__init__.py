"""Code sandbox: the model's Python runs in a confined worker process and calls tools over a socket.

```python
with Sandbox(Path("ws")) as sb:
    res = sb.run("print(add(1, 2))", [StubSpec("add", ["a", "b"], "add(a, b) -> int", "")],
                 lambda name, kwargs: kwargs["a"] + kwargs["b"])
    print(res.text())
```

The names below are loaded on first use, so that importing one light module of the package (e.g. `view`,
whose list of what the host trusts in a workspace the file tools share) does not start the whole sandbox.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .host import Sandbox
    from .spec import CodeResult, Handles, SandboxLimits, SandboxUnavailable, StubSpec, UnsafeWorkspace

__all__ = ["CodeResult", "Handles", "Sandbox", "SandboxLimits", "SandboxUnavailable", "StubSpec", "UnsafeWorkspace"]


def __getattr__(name: str) -> Any:
    if name == "Sandbox":
        from .host import Sandbox

        return Sandbox
    if name in __all__:
        from . import spec

        return getattr(spec, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
