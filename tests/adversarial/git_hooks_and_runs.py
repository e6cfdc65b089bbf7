"""Plant a git hook and forge toolmode's own state in the workspace (issue 16: what the host later trusts).
With namespaces, `.git` and `runs/` are bound read-only inside the writable workspace (and cannot be moved
away: they are mount points); the file tools refuse them in every tier. On the landlock tier the program
itself can still write there (documented: no namespaces, no read-only binds)."""
# setup-dir: .git/hooks
# setup-dir: runs/bench-x
# tools: write_file
# expect[namespaces]: hook OSError 30
# expect[namespaces]: bench state OSError 30
# expect[namespaces]: move .git OSError 16
# expect: write_file hook PermissionError
# expect: write_file runs PermissionError
# absent[namespaces]: {{WORKSPACE}}/.git/hooks/pre-commit
# absent[namespaces]: {{WORKSPACE}}/runs/bench-x/bench.json
# absent: {{WORKSPACE}}/.git/hooks/post-commit
# absent: {{WORKSPACE}}/runs/evil.json
import os
for label, action in [
    ("hook", lambda: open(".git/hooks/pre-commit", "w").write("#!/bin/sh\necho pwned\n")),
    ("bench state", lambda: open("runs/bench-x/bench.json", "w").write("{}")),
    ("move .git", lambda: os.rename(".git", "git-moved")),
]:
    try:
        action()
        print(label, "written")
    except OSError as e:
        print(label, type(e).__name__, e.errno)
for label, path in [("write_file hook", ".git/hooks/post-commit"), ("write_file runs", "runs/evil.json")]:
    try:
        write_file(path, "#!/bin/sh\necho pwned\n")
        print(label, "WROTE")
    except PermissionError as e:
        print(label, type(e).__name__)
