"""Write directly while keeping the host busy with tool calls, so it never waits long enough for its
periodic check: 200 MiB against an 8 MiB budget."""
# limits: timeout=10, max_write_mb=8, max_tool_calls=5000
# expect: wrote more than 8 MiB to the workspace
# max-written-mb: 16
chunk = b"\1" * (1 << 20)
for i in range(200):
    with open(f"busy{i}", "wb") as f:
        f.write(chunk)
    for _ in range(20):
        add(1, 2)
print("WROTE 200 MiB")
