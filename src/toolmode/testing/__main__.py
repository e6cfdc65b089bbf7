"""`python -m toolmode.testing --script replies.json`: run the scripted model server in the foreground."""

import sys

from toolmode.testing.cli import main

if __name__ == "__main__":
    sys.exit(main())
