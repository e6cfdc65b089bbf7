"""Flood the output: a huge line and many lines."""
# expect: [output truncated:
import sys
print("x" * 20_000_000)
for i in range(200_000):
    sys.stdout.write(f"line {i}\n")
