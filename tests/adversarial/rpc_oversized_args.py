"""A tool call whose arguments exceed the frame-size cap."""
# expect: broke the sandbox protocol
print(add("x" * 5_000_000, "y"))
