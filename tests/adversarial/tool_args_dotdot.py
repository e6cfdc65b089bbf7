"""Use a host tool (write_file) with `..` and absolute paths in its arguments."""
# expect: refused
for path in ["../sentinel/tool_dotdot", "{{SENTINEL}}/tool_abs", "a/../../sentinel/tool_dotdot2"]:
    try:
        print(write_file(path, "pwned"))
    except Exception as e:
        print(type(e).__name__, e)
