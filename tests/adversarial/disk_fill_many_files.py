"""Fill the disk with many files, each under the per-file size limit: the per-run write budget stops it."""
# expect: wrote more than 64 MiB to the workspace
import os
chunk = b"\1" * (1 << 20)
os.makedirs("fill", exist_ok=True)
for i in range(40):
    with open(f"fill/f{i}", "wb") as f:
        for _ in range(7):
            f.write(chunk)
print("WROTE 280 MiB")
