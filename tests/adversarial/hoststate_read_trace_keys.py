"""Read every trace and bench file under ./runs for credentials: a key in the base URL's userinfo, an
Authorization header, an sk- key. The host must have written none of them."""
# expect: searched
import os
import re

found = []
pattern = re.compile(r"://[^/@\s\"]{1,200}@|[Bb]earer [A-Za-z0-9._-]{8,}|sk-[A-Za-z0-9_-]{16,}")
for root, dirs, files in os.walk("runs"):
    for name in files:
        try:
            text = open(os.path.join(root, name), encoding="utf-8", errors="replace").read()
        except OSError:
            continue
        found += pattern.findall(text)
print("searched", sorted(set(found)))
