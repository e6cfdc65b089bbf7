"""Fill the disk with one file: the file-size limit stops it with an exception, not a crash."""
# expect: OSError File too large
chunk = b"\0" * (1 << 20)
written = 0
try:
    with open("big.bin", "wb") as f:
        while True:
            f.write(chunk)
            f.flush()
            written += 1
except OSError as e:
    print("OSError", e.strerror, "after", written, "MiB")
