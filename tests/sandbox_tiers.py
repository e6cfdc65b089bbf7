"""The sandbox's tiers as a test parameter: each test that takes `tier` runs on bubblewrap's and unshare's
namespaces tier and on the landlock tier; run_shell (tiers.DEFAULT_POLICY) follows the same tier."""

from __future__ import annotations

import pytest

from toolmode.sandbox import shell as _shell  # noqa: F401  # its launcher is the tiers' probe
from toolmode.sandbox import tiers

TIERS = ["bwrap", "unshare", "landlock"]
NAMESPACES = ("bwrap", "unshare")


@pytest.fixture(params=TIERS)
def tier(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """A tier this host can build (skipped, with the reason, where it truly cannot)."""
    ok, why = tiers.available(tiers.resolve_candidates(request.param)[0])
    if not ok:
        pytest.skip(f"the {request.param} tier cannot be built here: {why}")
    monkeypatch.setattr(tiers, "DEFAULT_POLICY", request.param)
    return str(request.param)


def expectations(source: str, key: str, tier: str) -> list[str]:
    """The values of `# key:` lines (every tier) and of `# key[namespaces]:` / `# key[landlock]:` lines for
    `tier`'s kind (bwrap and unshare are the namespaces tier)."""
    kinds = {"": True, "[namespaces]": tier in NAMESPACES, "[landlock]": tier == "landlock"}
    found = []
    for line in source.splitlines():
        for kind, wanted in kinds.items():
            if wanted and line.startswith(f"# {key}{kind}:"):
                found.append(line.split(":", 1)[1].strip())
    return found
