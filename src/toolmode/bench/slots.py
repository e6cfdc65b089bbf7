"""How many requests a local model server serves at once, to warn when `--jobs` asks for more.

llama.cpp's server reports its parallel slots (`-np`) at `GET /props` as `total_slots`. Episodes beyond
that queue inside the server, where their requests run into the request timeout and are retried, and a
retry throws the server's finished prompt work away.
"""

from __future__ import annotations

import urllib.request
from urllib.parse import urlsplit

from toolmode.bounded import loads_json

_LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "0.0.0.0"}


def server_slots(base_url: str, timeout: float = 3.0) -> int | None:
    """`total_slots` from the server's /props, or None when it does not say (not llama.cpp, unreachable)."""
    root = base_url.rstrip("/").removesuffix("/v1")
    try:
        with urllib.request.urlopen(f"{root}/props", timeout=timeout) as response:  # noqa: S310 - http(s) URL given by the user
            data = loads_json(response.read(1 << 20))
    except (OSError, ValueError):
        return None
    slots = data.get("total_slots") if isinstance(data, dict) else None
    return slots if isinstance(slots, int) and slots > 0 else None


def jobs_warning(base_url: str | None, local: bool, jobs: int) -> str | None:
    """A one-line warning when `jobs` exceeds what the local server at `base_url` can serve, else None."""
    if not base_url or jobs <= 1:
        return None
    if not local and urlsplit(base_url).hostname not in _LOCAL_HOSTS:
        return None
    slots = server_slots(base_url)
    if slots is None or jobs <= slots:
        return None
    return (f"--jobs {jobs} but the server at {base_url} serves {slots} request(s) at a time (total_slots="
            f"{slots}): the other episodes queue in the server and run into the request timeout; use --jobs "
            f"{slots}, or start the server with more slots (llama.cpp: -np {jobs})")
