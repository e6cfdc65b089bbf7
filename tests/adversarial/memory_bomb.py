"""Allocate far more memory than allowed, at once and step by step."""
# expect: at once MemoryError
# expect: step by step MemoryError
try:
    x = bytearray(8 * 1024**3)
except MemoryError:
    print("at once MemoryError")
chunks = []
try:
    while True:
        chunks.append(bytearray(16 * 1024**2))
except MemoryError:
    n = len(chunks)
    chunks = None
    print("step by step MemoryError after", n * 16, "MiB")
