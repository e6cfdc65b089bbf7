"""A dangling `./runs` symlink: the host must neither create its target outside nor stop working."""
# expect: planted
import os
os.symlink("{{SENTINEL}}/made-by-host", "runs")
print("planted", not os.path.exists("runs"))
