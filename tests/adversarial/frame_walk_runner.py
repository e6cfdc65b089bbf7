"""Walk up the frames into the worker's own code and use what is there (its channel, its namespace)."""
# expect: reached main
# expect: worker globals
import sys
f = sys._getframe()
names = []
while f is not None:
    names.append(f.f_code.co_name)
    if f.f_code.co_name == "main":
        print("reached main")
        g = f.f_globals
        print("worker globals", sorted(k for k in g if not k.startswith("__"))[:5])
        os = g["os"]
        try:
            os.execv("/bin/sh", ["sh", "-c", "echo pwned > {{SENTINEL}}/frames"])
        except OSError as e:
            print("exec blocked", type(e).__name__)
    f = f.f_back
print(names)
