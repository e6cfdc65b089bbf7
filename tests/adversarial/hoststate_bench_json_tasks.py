"""Point a bench's saved settings at a task file the program wrote (the next `bench --resume` would import it,
unconfined, with the API key in its environment). The host must refuse to import it."""
# expect: attempted
import json
import os

done = []
for root, dirs, files in os.walk("runs"):
    if "bench.json" in files:
        evil = os.path.join(os.path.abspath(root), "evil_tasks.py")
        try:
            with open(evil, "w") as f:
                f.write("open({{MARKER}}, 'w').write('imported')\nTASKS = []\n")
            path = os.path.join(root, "bench.json")
            settings = json.load(open(path))
            settings["tasks"] = evil
            settings.pop("signature", None)
            json.dump(settings, open(path, "w"))
            done.append("planted")
        except OSError as exc:
            done.append(f"refused: {exc.strerror}")
print("attempted", done)
