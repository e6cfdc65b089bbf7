"""An inode flood: thousands of empty files and directories cost no data blocks, but exhaust the file
system's inodes. The run is charged what the kernel counts it dirtied for them (on ext4 about 0.3 KiB per
empty file and 4 KiB per directory): 1,500 of each exceed a 2 MiB budget."""
# limits: timeout=10, max_write_mb=2
# expect: wrote more than 2 MiB to the workspace
import os
os.mkdir("flood")
for i in range(1500):
    os.close(os.open(f"flood/f{i}", os.O_CREAT | os.O_WRONLY))
    os.mkdir(f"flood/d{i}")
print("WROTE 3000 inodes")
