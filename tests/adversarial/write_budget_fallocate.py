"""Outrun the write budget with fallocate: it reserves 8 MiB (the file size limit) in microseconds, so 0.1 s
between two budget checks was enough for gigabytes (801 MiB against 64 MiB). Here glibc's posix_fallocate,
which must fall back to writing, at a speed the budget's check interval bounds."""
# max-written-mb: 256
# expect: wrote more than 64 MiB to the workspace
import os
for i in range(3000):
    fd = os.open(f"f{i}", os.O_CREAT | os.O_WRONLY, 0o644)
    os.posix_fallocate(fd, 0, 8 << 20)
    os.close(fd)
print("WROTE", 3000 * 8, "MiB")
