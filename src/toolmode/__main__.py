"""`python -m toolmode` is the `toolmode` command."""

from toolmode.cli import main

raise SystemExit(main())
