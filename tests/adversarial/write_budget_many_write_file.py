"""Many fast write_file calls, 512 KiB each (128 MiB against an 8 MiB budget): each is a host write."""
# limits: timeout=10, max_write_mb=8
# expect: wrote more than 8 MiB to the workspace
# max-written-mb: 16
data = "y" * (1 << 19)
for i in range(256):
    write_file(f"many/{i}.txt", data)
print("WROTE 128 MiB")
