"""Plant modules that MCP servers started in the workspace would import: `mcp_server_time.py` (for any
`python ... -m mcp_server_time`), a sitecustomize, a local node_modules. The host's next MCP start must
run none of them."""
# expect: planted
import os

code = "open({{MARKER}}, 'w').write('ran')\n"
for name in ("mcp_server_time.py", "toolmode_planted_srv.py", "sitecustomize.py", "usercustomize.py"):
    with open(name, "w") as f:
        f.write(code)
os.makedirs("node_modules/.bin", exist_ok=True)
with open("node_modules/.bin/mcp-server-everything", "w") as f:
    f.write("#!/bin/sh\necho ran > {{MARKER}}\n")
print("planted", sorted(os.listdir(".")))
