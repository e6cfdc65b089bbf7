"""An inode flood: thousands of empty files and directories cost no data blocks, but exhaust the file
system's inodes. Each is charged 4 KiB: 3,000 of them (and the directories' blocks) exceed an 8 MiB budget."""
# limits: timeout=10, max_write_mb=8
# expect: wrote more than 8 MiB to the workspace
import os
os.mkdir("flood")
for i in range(1500):
    os.close(os.open(f"flood/f{i}", os.O_CREAT | os.O_WRONLY))
    os.mkdir(f"flood/d{i}")
print("WROTE 3000 inodes")
