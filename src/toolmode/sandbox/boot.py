"""Start the code worker and the shell launcher from an immutable in-memory copy of their code.

The sources of the child programs (worker.py, launcher.py and the modules they use: protocol, caps,
landlock, seccomp, view, confine, namespaces) are read once, when the host imports this module, and compiled in memory on
first use (no bytecode cache is read). A child is `python -I -S -B -c BOOTSTRAP <fd> <size> <version> ...`: the bootstrap reads the
marshalled code from `fd`, a sealed memfd (no one can change it, not even the host), closes it and
executes the code as modules. No toolmode file is read at spawn time and no `sys.path` entry of the child
points at toolmode's package, so replacing worker.py or launcher.py on disk (an editable checkout inside
a workspace), or planting a module or a `__pycache__` file, cannot change what a later worker or
launcher runs. The child imports only the standard library.
"""

from __future__ import annotations

import fcntl
import marshal
import os
import sys
import threading
from pathlib import Path
from types import CodeType

HERE = Path(__file__).resolve().parent
_CONFINE = ("caps", "landlock", "seccomp", "view", "confine", "namespaces")  # each imports only earlier ones
PROGRAMS: dict[str, tuple[str, ...]] = {"worker": ("protocol", *_CONFINE), "launcher": _CONFINE}

# Runs in the child as `-c`; sys.argv[1:4] are fd, size, the host's sys.hexversion (marshal is per version).
BOOTSTRAP = """\
import marshal, os, sys
fd, size, version = map(int, sys.argv[1:4])
del sys.argv[1:4]
blob = os.pread(fd, size, 0)
os.close(fd)
if version != sys.hexversion or len(blob) != size:
    os.write(2, b"toolmode sandbox: cannot load the child's code (interpreter version or size differs)\\n")
    os._exit(126)
*modules, main = marshal.loads(blob)
for name, code in modules:
    module = type(sys)(name)
    sys.modules[name] = module
    exec(code, module.__dict__)
del marshal, fd, size, version, blob, modules, name, code, module
exec(main)
"""


# Read now, at import: what a later spawn runs is what was on disk when this process loaded its own modules.
# Compiled here, on first use (no bytecode cache is trusted: a planted .pyc changes nothing either).
_SOURCES: dict[str, bytes] = {name: (HERE / f"{name}.py").read_bytes()
                              for name in {*PROGRAMS, *(m for ms in PROGRAMS.values() for m in ms)}}
_payloads: dict[str, bytes] = {}


def _payload(program: str) -> bytes:
    """The marshalled (name, code) pairs of `program`'s modules, then its own code (call under _lock)."""
    if program not in _payloads:
        def code(name: str) -> CodeType:
            return compile(_SOURCES[name], str(HERE / f"{name}.py"), "exec", dont_inherit=True)

        _payloads[program] = marshal.dumps(tuple((m, code(m)) for m in PROGRAMS[program]) + (code(program),))
    return _payloads[program]


_SEALS = fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL
_memfds: dict[str, tuple[int, tuple[int, int]]] = {}  # program -> (fd, its (st_dev, st_ino))
_lock = threading.Lock()


def _identity(fd: int) -> tuple[int, int] | None:
    try:
        st = os.fstat(fd)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _sealed_memfd(program: str) -> tuple[int, int]:
    """The memfd holding `program`'s payload, and the payload's size. Made once per process and sealed
    against any change; made again if its descriptor was closed behind our back (a daemon closing all)."""
    with _lock:
        known = _memfds.get(program)
        if known is not None and _identity(known[0]) == known[1]:
            return known[0], len(_payloads[program])
        data = _payload(program)
        fd = os.memfd_create(f"toolmode-{program}", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS, _SEALS)
            identity = _identity(fd)
            assert identity is not None
        except BaseException:
            os.close(fd)
            raise
        _memfds[program] = (fd, identity)
        return fd, len(data)


def command(interpreter: str, program: str) -> tuple[list[str], int]:
    """The argv that starts `program` ("worker" or "launcher") from its in-memory code (its own
    arguments follow), and the descriptor to hand down (`pass_fds`; the child closes it at once)."""
    fd, size = _sealed_memfd(program)
    argv = [interpreter, "-I", "-S", "-B", "-c", BOOTSTRAP, str(fd), str(size), str(sys.hexversion)]
    return argv, fd
