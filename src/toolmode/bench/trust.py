"""What a resumed bench may trust from its `bench.json`, which the model's code can edit.

The bench directory usually lies inside the workspace (`./runs`). The settings that let a file run
code on the host or send the API key somewhere (`TRUSTED`: the task file, the suite path, the
endpoint, the key's variable) are taken from `bench.json` only when it carries this user's signature
(`hostkey`, a key outside any workspace) and, for a task file, only while the file is byte for byte the
one the bench started with. Otherwise the user names them on the command line again. Chosen over
keeping the state elsewhere: the bench directory stays self-contained (it can be moved, reported on,
shared), and only the decision to trust it needs the key.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from toolmode import hostkey
from toolmode.bench.checks import BenchUsageError
from toolmode.bench.results import SETTINGS
from toolmode.redact import REDACTED, redact

KIND = "bench settings"
SIGNATURE = "signature"
TASKS_DIGEST = "tasks_sha256"
# The settings that decide what code the host imports and where the API key goes.
TRUSTED = ("tasks", "suite_path", "base_url", "preset", "api_key_env")


def tasks_file(tasks: object) -> Path | None:
    """The task file that a `--tasks` value names (None for built-in task names)."""
    if isinstance(tasks, str) and tasks and (tasks.endswith(".py") or Path(tasks).is_file()):
        return Path(tasks)
    return None


def signed(settings: dict[str, Any]) -> dict[str, Any]:
    """`settings` as saved: credentials redacted, the task file's digest added, signed when a key exists."""
    saved: dict[str, Any] = json.loads(redact(json.dumps(settings, ensure_ascii=False, default=str)))
    saved.pop(SIGNATURE, None)
    path = tasks_file(saved.get("tasks"))
    saved.pop(TASKS_DIGEST, None)
    if path is not None:
        with contextlib.suppress(OSError):  # a missing file is refused when the tasks load
            saved[TASKS_DIGEST] = hostkey.file_digest(path)
    signature = hostkey.sign(KIND, saved)
    if signature is not None:
        saved[SIGNATURE] = signature
    return saved


def check_resume(where: Path, saved: dict[str, Any], asked: dict[str, Any]) -> None:
    """Refuse to take a trusted setting from `where`'s bench.json that the user did not give again.

    `asked`: the command line's values (None = not given). Raises BenchUsageError naming the options to give.
    """
    payload = {k: v for k, v in saved.items() if k != SIGNATURE}
    why = hostkey.verify(KIND, payload, saved.get(SIGNATURE))
    needed: list[str] = []
    if why is not None:
        needed = [k for k in TRUSTED if saved.get(k) not in (None, "") and asked.get(k) is None
                  and (k != "tasks" or tasks_file(saved[k]) is not None)]  # fmt: skip
    if needed:
        raise BenchUsageError(
            f"{where / SETTINGS} is not signed by you ({why}): a program may have edited it, or an older "
            "toolmode wrote it. A resumed bench imports no task file and sends your API key to no address "
            f"that this file names: give {_flags(needed, saved)} on the command line to continue it"
        )
    path = tasks_file(saved.get("tasks"))
    if path is not None and asked.get("tasks") is None:
        try:
            now = hostkey.file_digest(path)
        except OSError:
            now = None
        if now != saved.get(TASKS_DIGEST):
            raise BenchUsageError(
                f"the task file {path} is not the one this bench started with (it changed, or it is gone): "
                f"give --tasks {path} on the command line to continue the bench with it as it is now"
            )
    if REDACTED in str(saved.get("base_url") or "") and asked.get("base_url") is None:
        raise BenchUsageError(
            f"the base URL saved in {where / SETTINGS} held credentials, which are never saved: give "
            "--base-url again (with them) to continue the bench"
        )


def _flags(keys: list[str], saved: dict[str, Any]) -> str:
    return ", ".join(f"--{k.replace('_', '-')} (saved: {saved[k]})" for k in keys)
