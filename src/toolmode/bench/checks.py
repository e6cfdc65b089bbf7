"""What `toolmode bench` checks before its first episode: the bench directory, the settings, the tasks.

Every check raises BenchUsageError with one line fit for a user; the CLI prints it and exits with 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from toolmode.bench.results import SETTINGS, BenchDirError, read_settings
from toolmode.bench.task import Task
from toolmode.errors import ToolmodeError
from toolmode.redact import redact


class BenchUsageError(ToolmodeError, ValueError):
    """The bench cannot start as asked; the message says why and what to do."""


# Settings that change what an episode measures: a bench directory holds results of one value of each.
# (tasks, only, modes and runs may grow: the new episodes are added to the same bench.)
MEASURING = ("model", "base_url", "preset", "seed", "max_steps", "max_result_chars", "sandbox", "stream",
             "scripted", "failing", "suite", "suite_path", "temperature", "max_tokens")  # fmt: skip
MIX_FLAG = "--mix-settings"

# (setting, flag, smallest value, what it is)
_COUNTS = (
    ("runs", "--runs", 1, "runs per task and mode"),
    ("seed", "--seed", None, "the base seed"),
    ("max_steps", "--max-steps", 1, "model requests per episode"),
    ("max_result_chars", "--max-result-chars", 0, "the tool result cap in characters (0: no cap)"),
)


def bench_dir_state(path: Path) -> str:
    """ "missing", "empty", "bench" (holds bench.json), "file" or "foreign" (a folder holding other things)."""
    try:
        if not path.exists():
            return "missing"
        if not path.is_dir():
            return "file"
        if (path / SETTINGS).is_file():
            return "bench"
        return "foreign" if any(path.iterdir()) else "empty"
    except OSError as exc:
        raise BenchUsageError(f"cannot read {path}: {exc.strerror or exc}") from None


def saved_settings(resume: str | None, out: str | None) -> tuple[Path | None, dict[str, Any]]:
    """The bench directory named by --resume / --out and its saved settings ({} for a new bench).

    `--resume` needs an existing bench directory; `--out` takes a new or empty folder, or an existing
    bench (which it continues). A folder that holds other things is refused, never written into.
    """
    if resume and out and Path(resume).resolve() != Path(out).resolve():
        raise BenchUsageError(f"--resume {resume} and --out {out} name different folders; give one of them")
    if resume:
        where = Path(resume)
        state = bench_dir_state(where)
        if state != "bench":
            why = {
                "missing": "does not exist",
                "file": "is a file",
                "empty": "is empty",
                "foreign": f"is not a toolmode bench directory (no {SETTINGS})",
            }[state]
            raise BenchUsageError(
                f"cannot resume {where}: it {why}; start a new bench with --out {where}"
                if state in ("missing", "empty")
                else f"cannot resume {where}: it {why}"
            )
        return where, _read(where)
    if out:
        where = Path(out)
        state = bench_dir_state(where)
        if state == "file":
            raise BenchUsageError(f"--out {where} is a file; give a folder for the bench")
        if state == "foreign":
            raise BenchUsageError(
                f"--out {where} already holds files and is not a toolmode bench directory (no {SETTINGS}); "
                "give a new or empty folder"
            )
        return where, _read(where) if state == "bench" else {}
    return None, {}


def _read(where: Path) -> dict[str, Any]:
    try:
        settings = read_settings(where)
    except BenchDirError as exc:
        raise BenchUsageError(str(exc)) from None
    if not settings:
        raise BenchUsageError(f"cannot resume {where}: its {SETTINGS} is empty")
    return settings


def conflicts(saved: dict[str, Any], asked: dict[str, Any]) -> list[str]:
    """The measuring settings given on the command line (`asked`, None = not given) that differ from
    the saved ones (`saved`, with the defaults filled in)."""
    return [
        f"--{key.replace('_', '-')} {_show(_saved_form(key, asked[key]))} (saved: {_show(saved.get(key))})"
        for key in MEASURING
        if asked.get(key) is not None and _saved_form(key, asked[key]) != saved.get(key)
    ]


def _saved_form(key: str, value: Any) -> Any:
    """A value as bench.json holds it: a base URL without its credentials (they are never saved)."""
    return redact(value) if key == "base_url" and isinstance(value, str) else value


def _show(value: Any) -> str:
    if value is None:
        return "not set"
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def check_conflicts(where: Path, saved: dict[str, Any], asked: dict[str, Any], *, mix: bool) -> None:
    """Refuse settings that would mix two kinds of measurement in one bench directory (unless `mix`)."""
    if not saved or mix:
        return
    diff = conflicts(saved, asked)
    if diff:
        raise BenchUsageError(
            f"{where} holds a bench run with other settings: {'; '.join(diff)}. Its results would mix both; "
            f"give a new --out, drop these options to continue it as it was, or add {MIX_FLAG} to continue "
            "it with them anyway"
        )


def check_settings(
    settings: dict[str, Any], jobs: int, *, from_file: set[str] | None = None, saved_in: Path | None = None
) -> None:
    """Numbers in range and of the right type; a base URL that is a URL; --failing only with --scripted.

    The message of a setting named in `from_file` says it comes from `saved_in`'s bench.json.
    """

    def origin(key: str) -> str:
        return (
            f" (saved in {saved_in / SETTINGS})" if saved_in is not None and key in (from_file or ()) else ""
        )

    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise BenchUsageError(f"--jobs {jobs}: episodes run concurrently must be at least 1")
    for key, flag, least, what in _COUNTS:
        value = settings.get(key)
        if isinstance(value, bool) or not isinstance(value, int):
            raise BenchUsageError(f"{flag} {value!r}{origin(key)}: {what} must be a whole number")
        if least is not None and value < least:
            raise BenchUsageError(f"{flag} {value}{origin(key)}: {what} must be at least {least}")
    for key, flag in (("modes", "--modes"), ("tasks", "--tasks"), ("only", "--only"), ("model", "--model"),
                      ("preset", "--preset"), ("api_key_env", "--api-key-env"), ("base_url", "--base-url")):  # fmt: skip
        value = settings.get(key)
        if value is not None and not isinstance(value, str):
            raise BenchUsageError(f"{flag} {value!r}{origin(key)}: expected text")
    if settings.get("sandbox") not in ("auto", "landlock", "bwrap", "none"):
        raise BenchUsageError(
            f"--sandbox {settings.get('sandbox')!r}{origin('sandbox')}: use auto, landlock, bwrap or none"
        )
    for key in ("stream", "scripted", "failing"):
        if not isinstance(settings.get(key), bool):
            raise BenchUsageError(f"--{key} {settings.get(key)!r}{origin(key)}: expected true or false")
    url = settings.get("base_url")
    if url is not None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise BenchUsageError(
                f"--base-url {url!r}{origin('base_url')}: expected an http(s) URL such as http://127.0.0.1:8080/v1"
            )
        try:
            parts.port  # noqa: B018 - raises ValueError for a port out of range or not a number
        except ValueError:
            raise BenchUsageError(
                f"--base-url {url!r}{origin('base_url')}: the port is not a number from 0 to 65535"
            ) from None
    if settings.get("failing") and not settings.get("scripted"):
        raise BenchUsageError("--failing needs --scripted (it makes the scripted players answer wrongly)")


def check_scripted_players(tasks: list[Task], players: dict[str, Any]) -> None:
    """With --scripted every task needs a scripted player: its own (`Task.player`, e.g. a suite's) or a
    built-in task's."""
    missing = [t.name for t in tasks if t.player is None and t.name not in players]
    if missing:
        many = "s" if len(missing) > 1 else ""
        raise BenchUsageError(
            f"no scripted player for task{many} {', '.join(missing)}: --scripted plays the built-in tasks only "
            f"({', '.join(players)}); run your own tasks against a model (--base-url, --model)"
        )
