"""Write outside the workspace with relative paths and `..`, and by changing directory first."""
# expect[landlock]: PermissionError
# expect[namespaces]: ../sentinel/dotdot FileNotFoundError
import os
for path in ["../sentinel/dotdot", "./../sentinel/dotdot2", "sub/../../sentinel/dotdot3"]:
    os.makedirs("sub", exist_ok=True)
    try:
        open(path, "w").write("pwned")
        print("WROTE", path)
    except OSError as e:
        print(path, type(e).__name__)
os.chdir("..")
try:
    open("sentinel/after_chdir", "w").write("pwned")
except OSError as e:
    print("after chdir", type(e).__name__)
