"""`python -m toolmode` is the `toolmode` command.

`-m` puts the current directory first on sys.path; the package's `__init__` (which runs before this file)
has already taken it off (see `_safe_path`), so nothing planted there is imported.
"""

from toolmode.cli import main

raise SystemExit(main())
