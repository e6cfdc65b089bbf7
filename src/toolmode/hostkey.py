"""A per-user secret that authenticates host state kept where the model can write (a bench's settings).

A bench directory lives under `./runs`, usually inside the workspace, where the model's code can edit
files. What the host later trusts from it (which task file to import, where to send the API key) is
signed with HMAC-SHA256 under a key the model cannot read: `$XDG_STATE_HOME/toolmode/state.key`
(default `~/.local/state/toolmode/state.key`), made once with mode 0600. The sandbox never shows the
home directory to the model's code (neither the namespace view nor the Landlock rules include it).

The key is not used (so nothing verifies, and a resumed bench asks for its settings on the command
line) when it lies inside the current directory (the default workspace), is not a regular file of
this user, or can be read by others.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import json
import os
import secrets
import stat
from pathlib import Path
from typing import Any

KEY_BYTES = 32


class KeyUnavailable(OSError):
    """The state key cannot be used; the message says why in a few words."""


def key_path() -> Path:
    """Where the key lives: `$XDG_STATE_HOME/toolmode/state.key`, else `~/.local/state/toolmode/state.key`."""
    base = os.environ.get("XDG_STATE_HOME") or ""
    root = Path(base) if os.path.isabs(base) else Path.home() / ".local" / "state"
    return root / "toolmode" / "state.key"


def load_key(*, create: bool = True) -> bytes:
    """The key, made on first use when `create`; KeyUnavailable when it cannot be trusted."""
    path = key_path()
    where = Path(os.path.realpath(path.parent))
    if where.is_relative_to(Path(os.path.realpath(os.getcwd()))):
        raise KeyUnavailable(f"{path} lies inside the current directory, which sandboxed code may read")
    try:
        return _read(path)
    except FileNotFoundError:
        if not create:
            raise KeyUnavailable(f"{path} does not exist") from None
    try:
        os.makedirs(path.parent, mode=0o700, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except FileExistsError:  # made by another toolmode at the same moment
        return _read(path)
    except OSError as exc:
        raise KeyUnavailable(f"cannot make {path}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "wb") as out:
        out.write(secrets.token_bytes(KEY_BYTES))
    return _read(path)


def _read(path: Path) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            raise FileNotFoundError(exc.errno, exc.strerror, str(path)) from None
        raise KeyUnavailable(f"cannot open {path}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
            raise KeyUnavailable(f"{path} is not a regular file of this user")
        if info.st_mode & 0o077:
            raise KeyUnavailable(f"{path} can be read by others (chmod 600 it)")
        data = f.read(KEY_BYTES + 1)
    if len(data) != KEY_BYTES:
        raise KeyUnavailable(f"{path} is not a toolmode state key ({len(data)} bytes)")
    return data


def _canonical(kind: str, payload: dict[str, Any]) -> bytes:
    return (f"toolmode {kind} v1\n" + json.dumps(payload, sort_keys=True, separators=(",", ":"),
                                                   ensure_ascii=False)).encode()


def sign(kind: str, payload: dict[str, Any]) -> str | None:
    """The hex HMAC of `payload` (JSON-able) for state of `kind`, or None when no key can be used."""
    try:
        key = load_key()
    except KeyUnavailable:
        return None
    return hmac.new(key, _canonical(kind, payload), hashlib.sha256).hexdigest()


def verify(kind: str, payload: dict[str, Any], signature: object) -> str | None:
    """None when `signature` is this user's signature of `payload`; else why not, in a few words."""
    if not isinstance(signature, str) or not signature:
        return "it carries no signature"
    try:
        key = load_key(create=False)
    except KeyUnavailable as exc:
        return f"no state key to check it with: {exc}"
    expected = hmac.new(key, _canonical(kind, payload), hashlib.sha256).hexdigest()
    return None if hmac.compare_digest(expected, signature) else "its signature does not match its content"


def file_digest(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a file's bytes (hex)."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()
