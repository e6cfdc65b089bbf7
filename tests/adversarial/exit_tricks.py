"""Leave through SystemExit, then os._exit: the first is an error, the second ends the worker."""
# expect: ended the sandbox worker
try:
    raise SystemExit(3)
except SystemExit:
    print("caught SystemExit")
import os
os._exit(0)
