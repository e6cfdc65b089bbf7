"""A scripted OpenAI-compatible model server for tests and demos.

```python
from toolmode.testing import ScriptedModelServer, call, reply

with ScriptedModelServer([call("read_file", path="a.txt"), reply("done")]) as server:
    client = OpenAI(base_url=server.base_url, api_key="test")
    ...
server.requests  # what the client sent
```
"""

from toolmode.testing.cli import main
from toolmode.testing.script import Script, ScriptError, call, calls, fault, parse_item, reply
from toolmode.testing.server import ScriptedModelServer
from toolmode.testing.usage import UsageMeter

__all__ = [
    "Script",
    "ScriptError",
    "ScriptedModelServer",
    "UsageMeter",
    "call",
    "calls",
    "fault",
    "main",
    "parse_item",
    "reply",
]
