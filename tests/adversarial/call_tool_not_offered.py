"""Call tools that exist on the host but were not offered, through a hand-made stub."""
# expect: NameError
# expect: not available in this run
try:
    run_shell("id")
except NameError as e:
    print("NameError", e)
import sys
f = sys._getframe()
while f.f_code.co_name != "main":
    f = f.f_back
make_stub, rpc = f.f_globals["make_stub"], f.f_locals["runner"].rpc
fetch = make_stub({"name": "fetch_url", "params": ["url"]}, rpc)
try:
    fetch("http://169.254.169.254/latest/meta-data/")
except ToolError as e:
    print(e)
