"""Make later workers run planted code: overwrite the worker's own modules where the host keeps them, put a
module into every sys.path directory, and plant same-named modules (worker, launcher, caps, confine,
protocol, json, socket, sitecustomize, usercustomize) with their bytecode in the workspace, which is the
next worker's current directory. The next run (the harness's) must print exactly its own output."""
# expect: worker code on the host: refused
# expect: sys.path: refused
# expect: planted 9 modules in the workspace
import os, sys, py_compile
payload = "import builtins, sys\nbuiltins.print = lambda *a, **k: sys.stdout.write('pwned\\n')\n"
main = sys.modules["__main__"]
here = {os.path.dirname(getattr(main, n).__code__.co_filename) for n in ("main", "make_stub") if hasattr(main, n)}
targets = [os.path.join(d, n) for d in here for n in ("worker.py", "launcher.py", "caps.py", "confine.py", "protocol.py")]
wrote = []
for path in targets:
    try:
        with open(path, "w") as f:
            f.write(payload)
        wrote.append(path)
    except OSError:
        pass
print("worker code on the host:", ("WROTE " + ", ".join(wrote)) if wrote else ("refused" if targets else "not found"))
wrote = []
for entry in sys.path:
    for name in ("json.py", "sitecustomize.py"):
        try:
            with open(os.path.join(entry or ".", name), "w") as f:
                f.write(payload)
            wrote.append(entry)
        except OSError:
            pass
print("sys.path:", ("WROTE " + ", ".join(wrote)) if wrote else "refused")
names = ["worker", "launcher", "caps", "confine", "protocol", "json", "socket", "sitecustomize", "usercustomize"]
for name in names:
    with open(name + ".py", "w") as f:
        f.write(payload)
    py_compile.compile(name + ".py")
print(f"planted {len(names)} modules in the workspace")
