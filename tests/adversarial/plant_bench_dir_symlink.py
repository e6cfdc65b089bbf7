"""A real `./runs` whose bench directory is a symlink out, and a trace-like name linked out as well."""
# expect: planted
import os
os.makedirs("runs", exist_ok=True)
os.symlink("{{SENTINEL}}", "runs/bench-adversarial")
os.symlink("{{SENTINEL}}/keep.txt", "runs/results.jsonl")
print("planted", sorted(os.listdir("runs")))
