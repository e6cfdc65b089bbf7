"""The review of every x86_64 system call (syscalls.py) is what the filters do (issue 16, item 9).

The real BPF programs of the four filters (code worker and shell, namespaces and landlock tiers) are run by
a small interpreter of classic BPF over every number of the kernel's table, with arguments that name the
caller itself, and their answers compared with the review's decision for that call. A call added to the
kernel (a number past the review) is refused; a number the review does not decide fails the test.
"""

from __future__ import annotations

import errno
import struct
from pathlib import Path

import pytest

from toolmode.sandbox import seccomp, syscalls

AUDIT_ARCH_X86_64 = 0xC000003E
ALLOW = seccomp.RET_ALLOW
EPERM = seccomp.RET_ERRNO | errno.EPERM
ENOSYS = seccomp.RET_ERRNO | errno.ENOSYS
EOPNOTSUPP = seccomp.RET_ERRNO | errno.EOPNOTSUPP
WORKER_PID = 4242
# (worker, landlock tier): the landlock tier's shell filter is built for a kernel that scopes signals
FILTERS = {
    (True, False): seccomp.build_filter(worker=True, pid=WORKER_PID, scoped_signals=True),
    (False, False): seccomp.build_filter(worker=False, scoped_signals=True),
    (True, True): seccomp.build_filter(worker=True, pid=WORKER_PID, scoped_signals=True, metadata=True),
    (False, True): seccomp.build_filter(worker=False, scoped_signals=True, metadata=True),
}


def run_bpf(program: bytes, nr: int, args: tuple[int, ...] = (), arch: int = AUDIT_ARCH_X86_64) -> int:
    """What a classic-BPF seccomp program returns for (nr, arch, args): the subset our assembler emits."""
    code = [struct.unpack_from("<HBBI", program, i) for i in range(0, len(program), 8)]
    data = struct.pack("<iIQ", nr, arch, 0) + b"".join(struct.pack("<Q", a & (2**64 - 1))
                                                      for a in (*args, 0, 0, 0, 0, 0, 0)[:6])
    pc = acc = 0
    for _ in range(len(code)):  # no loops in classic BPF: every jump goes forward
        op, jt, jf, k = code[pc]
        if op == 0x20:  # ld [k]
            acc, pc = struct.unpack_from("<I", data, k)[0], pc + 1
        elif op == 0x06:  # ret k
            return k
        elif op == 0x05:  # ja k
            pc += 1 + k
        elif op in (0x15, 0x35, 0x45):  # jeq, jge, jset
            hit = acc == k if op == 0x15 else acc >= k if op == 0x35 else bool(acc & k)
            pc += 1 + (jt if hit else jf)
        else:
            raise AssertionError(f"unknown BPF instruction {op:#x}")
    raise AssertionError("the program ran off its end")


def expected(decision: str, worker: bool, landlock: bool) -> int | None:
    """The filter's answer for a decision (None: depends on the arguments, checked separately)."""
    return {
        syscalls.ALLOW: ALLOW, syscalls.KERNEL: ALLOW, syscalls.DENY: EPERM, syscalls.NOSYS: ENOSYS,
        syscalls.NOTSUP: EOPNOTSUPP, syscalls.WORKER: EPERM if worker else ALLOW,
        syscalls.META: EPERM if landlock else ALLOW, syscalls.META_NOTSUP: EOPNOTSUPP if landlock else ALLOW,
        syscalls.ARGS: None,
    }[decision]


def test_every_number_has_one_decision_and_the_filters_know_no_other_calls() -> None:
    assert set(syscalls.TABLE.values()) == set(syscalls.REVIEW)
    assert max(syscalls.TABLE) == seccomp.LAST_REVIEWED
    assert {n: syscalls.TABLE.get(nr) for n, nr in seccomp.NR.items()} == {n: n for n in seccomp.NR}


@pytest.mark.parametrize(("worker", "landlock"), list(FILTERS), ids=lambda v: str(v))
def test_the_filters_do_what_the_review_says(worker: bool, landlock: bool) -> None:
    program = FILTERS[worker, landlock]
    wrong = {}
    for nr, name in syscalls.TABLE.items():
        want = expected(syscalls.REVIEW[name][0], worker, landlock)
        if want is None:
            continue
        got = run_bpf(program, nr)
        if got != want:
            wrong[name] = (hex(got), hex(want))
    assert wrong == {}


@pytest.mark.parametrize(("worker", "landlock"), list(FILTERS), ids=lambda v: str(v))
def test_calls_with_checked_arguments(worker: bool, landlock: bool) -> None:
    program = FILTERS[worker, landlock]
    nr = seccomp.NR
    me = WORKER_PID if worker else 0
    other = 777
    # calls naming a process: the caller yes, another no
    for name in seccomp.PID_FIRST:
        assert run_bpf(program, nr[name], (0,)) == ALLOW, name
        assert run_bpf(program, nr[name], (other,)) == EPERM, name
    assert run_bpf(program, nr["getpriority"], (seccomp.PRIO_PROCESS, me)) == ALLOW
    assert run_bpf(program, nr["getpriority"], (2, 0)) == EPERM  # PRIO_USER: every process of the uid
    assert run_bpf(program, nr["ioprio_set"], (seccomp.IOPRIO_WHO_PROCESS, other)) == EPERM
    # clone: threads always, processes in the shell only, namespaces never
    assert run_bpf(program, nr["clone"], (seccomp.CLONE_THREAD | 0x100,)) == ALLOW
    assert run_bpf(program, nr["clone"], (17,)) == (EPERM if worker else ALLOW)
    assert run_bpf(program, nr["clone"], (0x10000000 | 17,)) == EPERM  # CLONE_NEWUSER
    # fcntl, ioctl, prctl
    assert run_bpf(program, nr["fcntl"], (3, seccomp.F_SETLEASE, 0)) == EPERM
    assert run_bpf(program, nr["fcntl"], (3, seccomp.F_NOTIFY, 0)) == EPERM
    assert run_bpf(program, nr["fcntl"], (3, 1, 0)) == ALLOW  # F_GETFD
    assert run_bpf(program, nr["ioctl"], (0, seccomp.TIOCSTI, 0)) == EPERM
    assert run_bpf(program, nr["ioctl"], (3, 0x40305828, 0)) == EOPNOTSUPP  # XFS_IOC_RESVSP
    assert run_bpf(program, nr["ioctl"], (3, 0x40086602, 0)) == (EPERM if landlock else ALLOW)  # FS_IOC_SETFLAGS
    assert run_bpf(program, nr["ioctl"], (3, 0x541B, 0)) == ALLOW  # FIONREAD
    assert run_bpf(program, nr["prctl"], (seccomp.PR_SCHED_CORE, 2, other)) == EPERM
    assert run_bpf(program, nr["prctl"], (15, 0)) == ALLOW  # PR_SET_NAME
    # signals: the worker at itself only
    if worker:
        assert run_bpf(program, nr["kill"], (WORKER_PID, 9)) == ALLOW
        assert run_bpf(program, nr["kill"], (other, 9)) == EPERM
        assert run_bpf(program, nr["tkill"], (WORKER_PID, 9)) == EPERM


def test_what_the_review_does_not_know_is_refused() -> None:
    for program in FILTERS.values():
        assert run_bpf(program, seccomp.LAST_REVIEWED + 1) == ENOSYS
        assert run_bpf(program, 1000) == ENOSYS
        assert run_bpf(program, 0x40000000 | 1) == EPERM  # x32
        assert run_bpf(program, 1, arch=0x40000003) == seccomp.RET_KILL_PROCESS  # i386


def test_the_written_review_is_current() -> None:
    doc = Path(__file__).parent.parent / "docs" / "sandbox-syscalls.md"
    assert doc.read_text() == syscalls.markdown(), "regenerate: python -m toolmode.sandbox.syscalls > " + str(doc)
