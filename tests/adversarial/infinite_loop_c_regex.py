"""An infinite loop in C: catastrophic regex backtracking (no Python signal handler can interrupt it)."""
# expect: timed out after
import re
re.match(r"(a+)+$", "a" * 64 + "b")
