"""Code sandbox: the model's Python runs in a confined worker process and calls tools over a socket.

```python
with Sandbox(Path("ws")) as sb:
    res = sb.run("print(add(1, 2))", [StubSpec("add", ["a", "b"], "add(a, b) -> int", "")],
                 lambda name, kwargs: kwargs["a"] + kwargs["b"])
    print(res.text())
```
"""

from .host import Sandbox
from .spec import CodeResult, Handles, SandboxLimits, SandboxUnavailable, StubSpec, UnsafeWorkspace

__all__ = ["CodeResult", "Handles", "Sandbox", "SandboxLimits", "SandboxUnavailable", "StubSpec", "UnsafeWorkspace"]
