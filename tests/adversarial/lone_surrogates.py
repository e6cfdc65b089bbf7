"""Lone surrogates in output and in tool arguments must not break the channel (and lose all output)."""
# expect: before
# expect: \ud800
# expect: arg ok \xffx
print("before")
print("\ud800 lone surrogate")
print("arg ok", add("\udcff", "x"))
