"""Replace the CLI's trace directory `./runs` with a symlink out of the workspace, so the host's next trace
(and a bench directory under it) would be written there."""
# expect: planted
import os
os.symlink("{{SENTINEL}}", "runs")
print("planted", os.readlink("runs") == "{{SENTINEL}}")
