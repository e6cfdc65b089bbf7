"""An inode flood that also keeps the host busy with tool calls (checked on every frame): 20,000 empty
files against a 2 MiB budget (on ext4 the kernel counts about 0.3 KiB dirtied per empty file)."""
# limits: timeout=10, max_write_mb=2, max_tool_calls=5000
# expect: wrote more than 2 MiB to the workspace
# max-written-mb: 16
import os
os.mkdir("flood")
for i in range(20000):
    os.close(os.open(f"flood/f{i}", os.O_CREAT | os.O_WRONLY))
    if i % 50 == 0:
        add(i, 1)
print("WROTE 20000 inodes")
