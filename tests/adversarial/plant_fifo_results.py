"""Bench files replaced by FIFOs nobody writes: a host that opens them to read would hang forever."""
# expect: planted
import os
os.makedirs("runs/bench-adversarial", exist_ok=True)
for name in ("results.jsonl", "bench.json"):
    os.mkfifo(f"runs/bench-adversarial/{name}")
print("planted", sorted(os.listdir("runs/bench-adversarial")))
