"""Write outside the workspace through symlinks and hard links made inside it."""
# expect[landlock]: symlink dir PermissionError
# expect[landlock]: symlink file PermissionError
# expect[namespaces]: symlink dir FileNotFoundError
# expect[namespaces]: symlink file FileNotFoundError
# expect[landlock]: hardlink OSError
# expect[namespaces]: hardlink FileNotFoundError
# expect-not: WROTE
import os
os.symlink("{{SENTINEL}}", "link_dir")
os.symlink("{{SENTINEL}}/keep.txt", "link_file")
for label, action in [("symlink dir", lambda: open("link_dir/via_symlink", "w").write("pwned")),
                      ("symlink file", lambda: open("link_file", "w").write("pwned")),
                      ("hardlink", lambda: os.link("{{SENTINEL}}/keep.txt", "hard"))]:
    try:
        action()
        print(label, "WROTE")
    except OSError as e:
        print(label, type(e).__name__, "OSError" if isinstance(e, OSError) else "")
