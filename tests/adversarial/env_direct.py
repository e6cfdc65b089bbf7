"""Read the host's environment directly: the worker's environment is scrubbed."""
# expect: HOME=
import os
for k, v in os.environ.items():
    print(f"{k}={v}")
print("DEEPSEEK" in str(os.environ))
