"""File-tool paths with hundreds of thousands of components: resolving them (realpath) would take the
host seconds to minutes of CPU in a thread that outlives the run."""
# expect: path too long
# expect-not: OPENED
import os
os.symlink(".", "loop")
paths = ["a/" * 400_000 + "x", "./" * 400_000 + "x", "loop/" * 150_000 + "x", "../" * 300_000 + "etc/passwd",
         "/" * 900_000 + "x", "a/" * 2000 + "x", "loop/" * 300 + "x"]
for p in paths:
    for fn, args in ((read_file, (p,)), (write_file, (p, "x")), (list_dir, (p,))):
        try:
            fn(*args)
            print("OPENED", fn.__name__, len(p))
        except Exception as exc:
            print(fn.__name__, type(exc).__name__, str(exc)[:70])
