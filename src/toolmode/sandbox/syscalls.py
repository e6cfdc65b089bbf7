"""The review of every x86_64 system call against the sandbox's seccomp filters (issue 16, item 9).

TABLE is the kernel's arch/x86/entry/syscalls/syscall_64.tbl as of Linux 6.19 (the "common" and "64" ABI
entries, 0-336 and 424-470); REVIEW gives each call one decision and the reason. The filters (seccomp.py)
implement the decisions; tests/test_sandbox_syscalls.py runs the real BPF programs of all four filters
(code worker and shell, namespaces and landlock tiers) over every number and fails when a decision and the
filter disagree, when a number has no decision, or when the filter names a call this table does not know.
Numbers above seccomp.LAST_REVIEWED (calls added to the kernel after this review) are refused with ENOSYS.

`python -m toolmode.sandbox.syscalls` prints docs/sandbox-syscalls.md.
"""

from __future__ import annotations

_TABLE = """
0 read 1 write 2 open 3 close 4 stat 5 fstat 6 lstat 7 poll 8 lseek 9 mmap 10 mprotect 11 munmap 12 brk
13 rt_sigaction 14 rt_sigprocmask 15 rt_sigreturn 16 ioctl 17 pread64 18 pwrite64 19 readv 20 writev 21 access
22 pipe 23 select 24 sched_yield 25 mremap 26 msync 27 mincore 28 madvise 29 shmget 30 shmat 31 shmctl 32 dup
33 dup2 34 pause 35 nanosleep 36 getitimer 37 alarm 38 setitimer 39 getpid 40 sendfile 41 socket 42 connect
43 accept 44 sendto 45 recvfrom 46 sendmsg 47 recvmsg 48 shutdown 49 bind 50 listen 51 getsockname
52 getpeername 53 socketpair 54 setsockopt 55 getsockopt 56 clone 57 fork 58 vfork 59 execve 60 exit 61 wait4
62 kill 63 uname 64 semget 65 semop 66 semctl 67 shmdt 68 msgget 69 msgsnd 70 msgrcv 71 msgctl 72 fcntl
73 flock 74 fsync 75 fdatasync 76 truncate 77 ftruncate 78 getdents 79 getcwd 80 chdir 81 fchdir 82 rename
83 mkdir 84 rmdir 85 creat 86 link 87 unlink 88 symlink 89 readlink 90 chmod 91 fchmod 92 chown 93 fchown
94 lchown 95 umask 96 gettimeofday 97 getrlimit 98 getrusage 99 sysinfo 100 times 101 ptrace 102 getuid
103 syslog 104 getgid 105 setuid 106 setgid 107 geteuid 108 getegid 109 setpgid 110 getppid 111 getpgrp
112 setsid 113 setreuid 114 setregid 115 getgroups 116 setgroups 117 setresuid 118 getresuid 119 setresgid
120 getresgid 121 getpgid 122 setfsuid 123 setfsgid 124 getsid 125 capget 126 capset 127 rt_sigpending
128 rt_sigtimedwait 129 rt_sigqueueinfo 130 rt_sigsuspend 131 sigaltstack 132 utime 133 mknod 134 uselib
135 personality 136 ustat 137 statfs 138 fstatfs 139 sysfs 140 getpriority 141 setpriority 142 sched_setparam
143 sched_getparam 144 sched_setscheduler 145 sched_getscheduler 146 sched_get_priority_max
147 sched_get_priority_min 148 sched_rr_get_interval 149 mlock 150 munlock 151 mlockall 152 munlockall
153 vhangup 154 modify_ldt 155 pivot_root 156 _sysctl 157 prctl 158 arch_prctl 159 adjtimex 160 setrlimit
161 chroot 162 sync 163 acct 164 settimeofday 165 mount 166 umount2 167 swapon 168 swapoff 169 reboot
170 sethostname 171 setdomainname 172 iopl 173 ioperm 174 create_module 175 init_module 176 delete_module
177 get_kernel_syms 178 query_module 179 quotactl 180 nfsservctl 181 getpmsg 182 putpmsg 183 afs_syscall
184 tuxcall 185 security 186 gettid 187 readahead 188 setxattr 189 lsetxattr 190 fsetxattr 191 getxattr
192 lgetxattr 193 fgetxattr 194 listxattr 195 llistxattr 196 flistxattr 197 removexattr 198 lremovexattr
199 fremovexattr 200 tkill 201 time 202 futex 203 sched_setaffinity 204 sched_getaffinity 205 set_thread_area
206 io_setup 207 io_destroy 208 io_getevents 209 io_submit 210 io_cancel 211 get_thread_area 212 lookup_dcookie
213 epoll_create 214 epoll_ctl_old 215 epoll_wait_old 216 remap_file_pages 217 getdents64 218 set_tid_address
219 restart_syscall 220 semtimedop 221 fadvise64 222 timer_create 223 timer_settime 224 timer_gettime
225 timer_getoverrun 226 timer_delete 227 clock_settime 228 clock_gettime 229 clock_getres 230 clock_nanosleep
231 exit_group 232 epoll_wait 233 epoll_ctl 234 tgkill 235 utimes 236 vserver 237 mbind 238 set_mempolicy
239 get_mempolicy 240 mq_open 241 mq_unlink 242 mq_timedsend 243 mq_timedreceive 244 mq_notify
245 mq_getsetattr 246 kexec_load 247 waitid 248 add_key 249 request_key 250 keyctl 251 ioprio_set
252 ioprio_get 253 inotify_init 254 inotify_add_watch 255 inotify_rm_watch 256 migrate_pages 257 openat
258 mkdirat 259 mknodat 260 fchownat 261 futimesat 262 newfstatat 263 unlinkat 264 renameat 265 linkat
266 symlinkat 267 readlinkat 268 fchmodat 269 faccessat 270 pselect6 271 ppoll 272 unshare 273 set_robust_list
274 get_robust_list 275 splice 276 tee 277 sync_file_range 278 vmsplice 279 move_pages 280 utimensat
281 epoll_pwait 282 signalfd 283 timerfd_create 284 eventfd 285 fallocate 286 timerfd_settime
287 timerfd_gettime 288 accept4 289 signalfd4 290 eventfd2 291 epoll_create1 292 dup3 293 pipe2
294 inotify_init1 295 preadv 296 pwritev 297 rt_tgsigqueueinfo 298 perf_event_open 299 recvmmsg
300 fanotify_init 301 fanotify_mark 302 prlimit64 303 name_to_handle_at 304 open_by_handle_at 305 clock_adjtime
306 syncfs 307 sendmmsg 308 setns 309 getcpu 310 process_vm_readv 311 process_vm_writev 312 kcmp
313 finit_module 314 sched_setattr 315 sched_getattr 316 renameat2 317 seccomp 318 getrandom 319 memfd_create
320 kexec_file_load 321 bpf 322 execveat 323 userfaultfd 324 membarrier 325 mlock2 326 copy_file_range
327 preadv2 328 pwritev2 329 pkey_mprotect 330 pkey_alloc 331 pkey_free 332 statx 333 io_pgetevents 334 rseq
335 uretprobe 336 uprobe 424 pidfd_send_signal 425 io_uring_setup 426 io_uring_enter 427 io_uring_register
428 open_tree 429 move_mount 430 fsopen 431 fsconfig 432 fsmount 433 fspick 434 pidfd_open 435 clone3
436 close_range 437 openat2 438 pidfd_getfd 439 faccessat2 440 process_madvise 441 epoll_pwait2
442 mount_setattr 443 quotactl_fd 444 landlock_create_ruleset 445 landlock_add_rule 446 landlock_restrict_self
447 memfd_secret 448 process_mrelease 449 futex_waitv 450 set_mempolicy_home_node 451 cachestat 452 fchmodat2
453 map_shadow_stack 454 futex_wake 455 futex_wait 456 futex_requeue 457 statmount 458 listmount
459 lsm_get_self_attr 460 lsm_set_self_attr 461 lsm_list_modules 462 mseal 463 setxattrat 464 getxattrat
465 listxattrat 466 removexattrat 467 open_tree_attr 468 file_getattr 469 file_setattr 470 listns
"""
_FIELDS = _TABLE.split()
TABLE: dict[int, str] = {int(_FIELDS[i]): _FIELDS[i + 1] for i in range(0, len(_FIELDS), 2)}

ALLOW = "allowed"
ARGS = "allowed, arguments checked"
DENY = "refused: EPERM"
NOSYS = "refused: ENOSYS"
NOTSUP = "refused: EOPNOTSUPP"
WORKER = "worker: EPERM; shell: allowed"
META = "namespaces: allowed; landlock tier: EPERM"
META_NOTSUP = "namespaces: allowed; landlock tier: EOPNOTSUPP"
KERNEL = "allowed (the kernel has no implementation: ENOSYS)"

_PATHS = "path-taking: Landlock decides (with namespaces, also the view: absent or read-only outside the workspace)"
_FDS = "works on descriptors the process already holds (their access was decided when they were opened)"
_SELF = "acts on the calling process or thread only"
_MEM = "the process's own memory; address space bounded by RLIMIT_AS, resident memory by the run's cgroup or sampling"
_SOCK = "sockets: socket() is refused, so only inherited or socketpair() sockets (the worker's channel, the shell's pairs)"
_SIG = "own signal state"
_TIME = "reads clocks or sleeps"
_IDS = "own credentials; with no capability left, only to ids it already has"
_PID = "names a process: allowed only for the caller (pid 0, or the worker's own pid)"
_MOUNT = "mounting: a sandbox could hide writes from the budget or change its own view"
_HOST = "administers the machine (needs capabilities that are dropped; refused outright)"
_NS = "new namespaces are refused: the view and the walls are built before the program starts"
_SYSV = "SysV IPC is named per IPC namespace, not by a path: without namespaces it is the host's"
_MQ = "POSIX message queues are named per IPC namespace, not by a path Landlock sees"
_META = ("file metadata: Landlock does not govern it, and a descriptor opened read-only on a host file is enough "
         "for its owner; with namespaces the host's files are absent or on read-only mounts")
_XATTR = ("extended attributes (reads too: keys are kept in them): with namespaces absent or read-only; on the "
          "landlock tier every xattr call answers EOPNOTSUPP, as a file system without them does")

REVIEW: dict[str, tuple[str, str]] = {
    # --- files and descriptors
    "read": (ALLOW, _FDS), "write": (ALLOW, _FDS + "; written bytes are charged to the write budget"),
    "open": (ALLOW, _PATHS), "openat": (ALLOW, _PATHS), "openat2": (ALLOW, _PATHS), "creat": (ALLOW, _PATHS),
    "close": (ALLOW, _FDS), "close_range": (ALLOW, _FDS),
    "stat": (ALLOW, _PATHS + "; Landlock does not govern stat: on the landlock tier host paths' sizes and times stay visible"),
    "lstat": (ALLOW, "as stat"), "newfstatat": (ALLOW, "as stat"), "statx": (ALLOW, "as stat"),
    "fstat": (ALLOW, _FDS), "access": (ALLOW, "as stat"), "faccessat": (ALLOW, "as stat"),
    "faccessat2": (ALLOW, "as stat"), "readlink": (ALLOW, "as stat"), "readlinkat": (ALLOW, "as stat"),
    "getdents": (ALLOW, _FDS + " (Landlock's READ_DIR decided the open)"), "getdents64": (ALLOW, "as getdents"),
    "lseek": (ALLOW, _FDS), "pread64": (ALLOW, _FDS), "pwrite64": (ALLOW, _FDS), "readv": (ALLOW, _FDS),
    "writev": (ALLOW, _FDS), "preadv": (ALLOW, _FDS), "pwritev": (ALLOW, _FDS), "preadv2": (ALLOW, _FDS),
    "pwritev2": (ALLOW, _FDS), "sendfile": (ALLOW, _FDS), "splice": (ALLOW, _FDS), "tee": (ALLOW, _FDS),
    "vmsplice": (ALLOW, _FDS), "copy_file_range": (ALLOW, _FDS + "; the destination must be open for writing"),
    "dup": (ALLOW, _FDS), "dup2": (ALLOW, _FDS), "dup3": (ALLOW, _FDS), "pipe": (ALLOW, "a pipe between its own "
    "processes; buffers bounded by RLIMIT_NOFILE and the per-user pipe limits"), "pipe2": (ALLOW, "as pipe"),
    "fsync": (ALLOW, _FDS), "fdatasync": (ALLOW, _FDS), "sync_file_range": (ALLOW, _FDS), "syncfs": (ALLOW, _FDS),
    "sync": (ALLOW, "flushes dirty pages machine-wide: costs I/O time, changes no data"),
    "readahead": (ALLOW, _FDS), "fadvise64": (ALLOW, _FDS),
    "flock": (ALLOW, "advisory lock on a file it could open; no host program locks what the view shows"),
    "truncate": (ALLOW, _PATHS + " (Landlock's TRUNCATE right)"), "ftruncate": (ALLOW, _FDS + " (TRUNCATE)"),
    "fallocate": (NOTSUP, "reserves gigabytes in microseconds, past any check interval of the write budget; "
                  "glibc's posix_fallocate and most tools fall back to writing"),
    "chdir": (ALLOW, _PATHS), "fchdir": (ALLOW, _FDS), "getcwd": (ALLOW, _SELF),
    "rename": (ALLOW, _PATHS + " (REFER across directories; EXDEV across mounts)"), "renameat": (ALLOW, "as rename"),
    "renameat2": (ALLOW, "as rename"), "mkdir": (ALLOW, _PATHS), "mkdirat": (ALLOW, _PATHS),
    "rmdir": (ALLOW, _PATHS), "unlink": (ALLOW, _PATHS), "unlinkat": (ALLOW, _PATHS),
    "link": (ALLOW, _PATHS + " (a host file cannot be linked in: REFER, EXDEV)"), "linkat": (ALLOW, "as link"),
    "symlink": (ALLOW, _PATHS), "symlinkat": (ALLOW, _PATHS),
    "mknod": (ALLOW, _PATHS + "; devices need CAP_MKNOD, which is dropped"), "mknodat": (ALLOW, "as mknod"),
    "umask": (ALLOW, _SELF), "statfs": (ALLOW, "file system sizes of a path it can name"),
    "fstatfs": (ALLOW, _FDS), "ustat": (ALLOW, "file system sizes by device number"),
    "sysfs": (ALLOW, "the kernel's list of file system types"),
    "cachestat": (ALLOW, "page cache state of a file it holds open (the kernel asks for write access or ownership)"),
    "name_to_handle_at": (DENY, "file handles bypass path checks"),
    "open_by_handle_at": (DENY, "opens by handle, around every path check"),
    # --- file metadata (issue 16, class 1)
    "chmod": (META, _META), "fchmod": (META, _META), "fchmodat": (META, _META), "fchmodat2": (META, _META),
    "chown": (META, _META), "fchown": (META, _META), "lchown": (META, _META), "fchownat": (META, _META),
    "utime": (META, _META), "utimes": (META, _META), "utimensat": (META, _META), "futimesat": (META, _META),
    "setxattr": (META_NOTSUP, _XATTR), "lsetxattr": (META_NOTSUP, _XATTR), "fsetxattr": (META_NOTSUP, _XATTR),
    "getxattr": (META_NOTSUP, _XATTR), "lgetxattr": (META_NOTSUP, _XATTR), "fgetxattr": (META_NOTSUP, _XATTR),
    "listxattr": (META_NOTSUP, _XATTR), "llistxattr": (META_NOTSUP, _XATTR), "flistxattr": (META_NOTSUP, _XATTR),
    "removexattr": (META_NOTSUP, _XATTR), "lremovexattr": (META_NOTSUP, _XATTR),
    "fremovexattr": (META_NOTSUP, _XATTR), "setxattrat": (META_NOTSUP, _XATTR), "getxattrat": (META_NOTSUP, _XATTR),
    "listxattrat": (META_NOTSUP, _XATTR), "removexattrat": (META_NOTSUP, _XATTR),
    "file_setattr": (META_NOTSUP, "inode attributes (flags, project id) of a path: metadata, as chmod"),
    "file_getattr": (ALLOW, "reads inode attributes, as stat"),
    "inotify_init": (NOSYS, "instances count against the host user's small limit and watches on host paths see the "
                     "host's files come and go; tools poll instead"),
    "inotify_init1": (NOSYS, "as inotify_init"), "inotify_add_watch": (NOSYS, "as inotify_init"),
    "inotify_rm_watch": (ALLOW, "removes a watch from an instance it cannot have"),
    "fanotify_init": (DENY, "watches whole mounts"), "fanotify_mark": (DENY, "as fanotify_init"),
    # --- memory
    "mmap": (ALLOW, _MEM), "mprotect": (ALLOW, _MEM), "munmap": (ALLOW, _MEM), "brk": (ALLOW, _MEM),
    "mremap": (ALLOW, _MEM), "msync": (ALLOW, _MEM + "; dirtied file pages are charged to the write budget"),
    "mincore": (ALLOW, "residency of its own mappings"), "madvise": (ALLOW, _MEM),
    "mlock": (ALLOW, _MEM + "; RLIMIT_MEMLOCK (CAP_IPC_LOCK is dropped)"), "munlock": (ALLOW, _MEM),
    "mlockall": (ALLOW, "as mlock"), "munlockall": (ALLOW, _MEM), "mlock2": (ALLOW, "as mlock"),
    "remap_file_pages": (ALLOW, _MEM), "pkey_mprotect": (ALLOW, _MEM), "pkey_alloc": (ALLOW, _MEM),
    "pkey_free": (ALLOW, _MEM), "mseal": (ALLOW, _MEM), "map_shadow_stack": (ALLOW, _MEM),
    "membarrier": (ALLOW, "barriers among its own threads"),
    "mbind": (ALLOW, "NUMA policy of its own memory"), "set_mempolicy": (ALLOW, "as mbind"),
    "get_mempolicy": (ALLOW, "as mbind"), "set_mempolicy_home_node": (ALLOW, "as mbind"),
    "migrate_pages": (DENY, "takes a pid: another process's memory"), "move_pages": (DENY, "as migrate_pages"),
    "memfd_create": (NOSYS, "pages held by a descriptor count against no rlimit (RLIMIT_AS sees mappings only) and, "
                     "held by a partial mapping, against nothing the host can read; libraries fall back"),
    "memfd_secret": (NOSYS, "memory no one else can see, as memfd_create"),
    "userfaultfd": (DENY, "a classic kernel-exploit primitive; nothing in a sandboxed program needs it"),
    "process_vm_readv": (DENY, "another process's memory"), "process_vm_writev": (DENY, "as process_vm_readv"),
    "process_madvise": (DENY, "another process's memory"), "process_mrelease": (DENY, "as process_madvise"),
    # --- processes and threads
    "clone": (ARGS, "threads everywhere; new processes in the shell only; never new namespaces"),
    "clone3": (NOSYS, "its flags are behind a pointer the filter cannot read; glibc falls back to clone"),
    "fork": (WORKER, "no new processes in the code worker"), "vfork": (WORKER, "as fork"),
    "execve": (WORKER, "no programs in the code worker; the shell execs (Landlock's EXECUTE decides what)"),
    "execveat": (WORKER, "as execve"), "exit": (ALLOW, _SELF), "exit_group": (ALLOW, _SELF),
    "wait4": (ALLOW, "its own children"), "waitid": (ALLOW, "its own children"),
    "getpid": (ALLOW, _SELF), "gettid": (ALLOW, _SELF), "getppid": (ALLOW, _SELF), "getpgrp": (ALLOW, _SELF),
    "set_tid_address": (ALLOW, _SELF), "set_robust_list": (ALLOW, _SELF),
    "get_robust_list": (ARGS, _PID), "arch_prctl": (ALLOW, _SELF + " (FS/GS base, CET)"),
    "set_thread_area": (KERNEL, "32-bit only"), "get_thread_area": (KERNEL, "32-bit only"),
    "prctl": (ARGS, _SELF + "; PR_SCHED_CORE, which moves core-scheduling cookies to and from other pids, refused"),
    "seccomp": (ALLOW, "adds filters to itself: can only refuse more"),
    "landlock_create_ruleset": (ALLOW, "restricts itself further"), "landlock_add_rule": (ALLOW, "as above"),
    "landlock_restrict_self": (ALLOW, "as above"), "rseq": (ALLOW, _SELF),
    "personality": (DENY, "execution domains: refused, as old exploits used it"),
    "modify_ldt": (DENY, "16-bit segments: attack surface, no use"), "uselib": (DENY, "obsolete library loading"),
    "ptrace": (DENY, "another process's memory and registers"), "kcmp": (DENY, "compares other processes' resources"),
    "pidfd_open": (DENY, "a pidfd of any pid would be an existence oracle; children's come from clone(CLONE_PIDFD)"),
    "pidfd_getfd": (DENY, "takes another process's descriptors"),
    "pidfd_send_signal": (WORKER, "the shell signals its own children through their pidfds"),
    "capget": (WORKER, "reads any pid's capabilities (the pid is behind a pointer); the shell's tools read their own"),
    "capset": (ALLOW, "can only drop: none are left"),
    "setsid": (DENY, "nothing may leave the session the host kills"), "setpgid": (DENY, "as setsid"),
    "getsid": (ARGS, _PID), "getpgid": (ARGS, _PID),
    "getuid": (ALLOW, _SELF), "getgid": (ALLOW, _SELF), "geteuid": (ALLOW, _SELF), "getegid": (ALLOW, _SELF),
    "getresuid": (ALLOW, _SELF), "getresgid": (ALLOW, _SELF), "getgroups": (ALLOW, _SELF),
    "setuid": (ALLOW, _IDS), "setgid": (ALLOW, _IDS), "setreuid": (ALLOW, _IDS), "setregid": (ALLOW, _IDS),
    "setresuid": (ALLOW, _IDS), "setresgid": (ALLOW, _IDS), "setfsuid": (ALLOW, _IDS), "setfsgid": (ALLOW, _IDS),
    "setgroups": (ALLOW, _IDS + " (denied in the namespaces tier's user namespace)"),
    "getrlimit": (ALLOW, _SELF), "setrlimit": (ALLOW, _SELF + "; hard limits can only be lowered"),
    "prlimit64": (ARGS, _PID), "getrusage": (ALLOW, _SELF), "times": (ALLOW, _SELF),
    "getpriority": (ARGS, "a process (itself), its own process group; never a user (every process of the uid)"),
    "setpriority": (ARGS, "as getpriority"), "ioprio_get": (ARGS, "as getpriority"), "ioprio_set": (ARGS, "as getpriority"),
    "sched_yield": (ALLOW, _SELF), "sched_get_priority_max": (ALLOW, "constants"),
    "sched_get_priority_min": (ALLOW, "constants"), "sched_setparam": (ARGS, _PID), "sched_getparam": (ARGS, _PID),
    "sched_setscheduler": (ARGS, _PID), "sched_getscheduler": (ARGS, _PID), "sched_rr_get_interval": (ARGS, _PID),
    "sched_setaffinity": (ARGS, _PID), "sched_getaffinity": (ARGS, _PID), "sched_setattr": (ARGS, _PID),
    "sched_getattr": (ARGS, _PID), "getcpu": (ALLOW, _SELF),
    "futex": (ALLOW, "its own threads' synchronisation"), "futex_waitv": (ALLOW, "as futex"),
    "futex_wake": (ALLOW, "as futex"), "futex_wait": (ALLOW, "as futex"), "futex_requeue": (ALLOW, "as futex"),
    "restart_syscall": (ALLOW, _SELF), "uname": (ALLOW, "kernel release and host name (with namespaces: its own)"),
    "sysinfo": (ALLOW, "load, uptime, memory totals: machine-wide figures, no process's"),
    "getrandom": (ALLOW, "random bytes"),
    "uretprobe": (ALLOW, "only works from a kernel-installed uprobe trampoline"), "uprobe": (ALLOW, "as uretprobe"),
    "lsm_get_self_attr": (ALLOW, "its own security labels"), "lsm_list_modules": (ALLOW, "the list of LSMs"),
    "lsm_set_self_attr": (DENY, "changing its own security context (e.g. the next exec's profile)"),
    # --- signals and timers
    "rt_sigaction": (ALLOW, _SIG), "rt_sigprocmask": (ALLOW, _SIG), "rt_sigreturn": (ALLOW, _SIG),
    "rt_sigpending": (ALLOW, _SIG), "rt_sigtimedwait": (ALLOW, _SIG), "rt_sigsuspend": (ALLOW, _SIG),
    "sigaltstack": (ALLOW, _SIG), "pause": (ALLOW, _SIG), "signalfd": (ALLOW, _SIG), "signalfd4": (ALLOW, _SIG),
    "kill": (ARGS, "worker: itself only; shell: its own processes (a PID namespace or Landlock's signal scoping "
             "confines them), else never pid <= 0 or the host"),
    "tgkill": (ARGS, "as kill"), "tkill": (ARGS, "worker: refused; shell: where signals are confined (else a "
                                        "thread id could be one of the host's: refused)"),
    "rt_sigqueueinfo": (ARGS, "worker: refused; shell: as kill"), "rt_tgsigqueueinfo": (ARGS, "as rt_sigqueueinfo"),
    "alarm": (ALLOW, "its own timer (a persistent worker is stopped between runs and disarms it)"),
    "getitimer": (ALLOW, _SIG), "setitimer": (ALLOW, "as alarm"), "timer_create": (ALLOW, "as alarm"),
    "timer_settime": (ALLOW, "as alarm"), "timer_gettime": (ALLOW, "as alarm"), "timer_getoverrun": (ALLOW, "as alarm"),
    "timer_delete": (ALLOW, "as alarm"), "timerfd_create": (ALLOW, "as alarm"), "timerfd_settime": (ALLOW, "as alarm"),
    "timerfd_gettime": (ALLOW, "as alarm"),
    "nanosleep": (ALLOW, _TIME), "clock_nanosleep": (ALLOW, _TIME), "clock_gettime": (ALLOW, _TIME),
    "clock_getres": (ALLOW, _TIME), "gettimeofday": (ALLOW, _TIME), "time": (ALLOW, _TIME),
    "clock_settime": (DENY, _HOST), "settimeofday": (DENY, _HOST), "adjtimex": (DENY, _HOST),
    "clock_adjtime": (DENY, _HOST),
    # --- waiting on descriptors
    "poll": (ALLOW, _FDS), "ppoll": (ALLOW, _FDS), "select": (ALLOW, _FDS), "pselect6": (ALLOW, _FDS),
    "epoll_create": (ALLOW, _FDS), "epoll_create1": (ALLOW, _FDS), "epoll_ctl": (ALLOW, _FDS),
    "epoll_wait": (ALLOW, _FDS), "epoll_pwait": (ALLOW, _FDS), "epoll_pwait2": (ALLOW, _FDS),
    "epoll_ctl_old": (KERNEL, "never implemented"), "epoll_wait_old": (KERNEL, "never implemented"),
    "eventfd": (ALLOW, _FDS), "eventfd2": (ALLOW, _FDS),
    "ioctl": (ARGS, "on its descriptors; refused: TIOCSTI and TIOCLINUX (typing into a terminal), SIGIO owners "
              "(FIOSETOWN, SIOCSPGRP) where signals are not confined, XFS space reservations (fallocate by another "
              "name), and on the landlock tier the inode-attribute setters (chattr flags, fsxattr, generation, "
              "fs-verity, encryption policy)"),
    "fcntl": (ARGS, "on its descriptors; refused: F_SETLEASE (a lease on a readable host file stalls every host "
              "process that opens it), F_NOTIFY (dnotify, as inotify), and SIGIO owners other than itself"),
    # --- sockets
    "socket": (DENY, "no network, no pathname unix sockets (Landlock up to ABI 7 does not govern connect)"),
    "socketpair": (WORKER, "the shell's processes talk through pairs; the worker has its channel"),
    "connect": (ALLOW, _SOCK), "accept": (ALLOW, _SOCK), "accept4": (ALLOW, _SOCK), "sendto": (ALLOW, _SOCK),
    "recvfrom": (ALLOW, _SOCK), "sendmsg": (ALLOW, _SOCK), "recvmsg": (ALLOW, _SOCK), "sendmmsg": (ALLOW, _SOCK),
    "recvmmsg": (ALLOW, _SOCK), "shutdown": (ALLOW, _SOCK), "bind": (ALLOW, _SOCK), "listen": (ALLOW, _SOCK),
    "getsockname": (ALLOW, _SOCK), "getpeername": (ALLOW, _SOCK), "setsockopt": (ALLOW, _SOCK),
    "getsockopt": (ALLOW, _SOCK),
    # --- IPC (issue 16, class 2)
    "shmget": (DENY, _SYSV), "shmat": (DENY, _SYSV), "shmctl": (DENY, _SYSV), "shmdt": (DENY, _SYSV),
    "semget": (DENY, _SYSV), "semop": (DENY, _SYSV), "semctl": (DENY, _SYSV), "semtimedop": (DENY, _SYSV),
    "msgget": (DENY, _SYSV), "msgsnd": (DENY, _SYSV), "msgrcv": (DENY, _SYSV), "msgctl": (DENY, _SYSV),
    "mq_open": (DENY, _MQ), "mq_unlink": (DENY, _MQ), "mq_timedsend": (DENY, _MQ), "mq_timedreceive": (DENY, _MQ),
    "mq_notify": (DENY, _MQ), "mq_getsetattr": (DENY, _MQ),
    # --- asynchronous I/O
    "io_setup": (NOSYS, "kernel AIO rings count against the machine-wide aio-max-nr; glibc's AIO uses threads"),
    "io_destroy": (NOSYS, "as io_setup"), "io_getevents": (NOSYS, "as io_setup"), "io_submit": (NOSYS, "as io_setup"),
    "io_cancel": (NOSYS, "as io_setup"), "io_pgetevents": (NOSYS, "as io_setup"),
    "io_uring_setup": (DENY, "a second system-call interface the filter cannot see into"),
    "io_uring_enter": (DENY, "as io_uring_setup"), "io_uring_register": (DENY, "as io_uring_setup"),
    # --- namespaces and mounts
    "unshare": (DENY, _NS), "setns": (DENY, _NS), "mount": (DENY, _MOUNT), "umount2": (DENY, _MOUNT),
    "pivot_root": (DENY, _MOUNT), "chroot": (DENY, _MOUNT), "open_tree": (DENY, _MOUNT),
    "open_tree_attr": (DENY, _MOUNT), "move_mount": (DENY, _MOUNT), "fsopen": (DENY, _MOUNT),
    "fsconfig": (DENY, _MOUNT), "fsmount": (DENY, _MOUNT), "fspick": (DENY, _MOUNT), "mount_setattr": (DENY, _MOUNT),
    "statmount": (NOSYS, "the mount table (without namespaces: the host's paths); util-linux reads /proc instead"),
    "listmount": (NOSYS, "as statmount"), "listns": (NOSYS, "lists namespaces of the machine"),
    # --- the machine
    "reboot": (DENY, _HOST), "swapon": (DENY, _HOST), "swapoff": (DENY, _HOST), "acct": (DENY, _HOST),
    "sethostname": (DENY, _HOST), "setdomainname": (DENY, _HOST), "iopl": (DENY, _HOST), "ioperm": (DENY, _HOST),
    "init_module": (DENY, _HOST), "finit_module": (DENY, _HOST), "delete_module": (DENY, _HOST),
    "kexec_load": (DENY, _HOST), "kexec_file_load": (DENY, _HOST), "quotactl": (DENY, _HOST),
    "quotactl_fd": (DENY, _HOST), "syslog": (DENY, "the kernel log"), "vhangup": (DENY, _HOST),
    "bpf": (DENY, "kernel programs: attack surface"), "perf_event_open": (DENY, "performance counters: side channels"),
    "add_key": (DENY, "the kernel keyrings are shared with the host user"), "request_key": (DENY, "as add_key"),
    "keyctl": (DENY, "as add_key"),
    "_sysctl": (KERNEL, "removed"), "create_module": (KERNEL, "removed"), "get_kernel_syms": (KERNEL, "removed"),
    "query_module": (KERNEL, "removed"), "nfsservctl": (KERNEL, "removed"), "getpmsg": (KERNEL, "never implemented"),
    "putpmsg": (KERNEL, "never implemented"), "afs_syscall": (KERNEL, "never implemented"),
    "tuxcall": (KERNEL, "never implemented"), "security": (KERNEL, "never implemented"),
    "lookup_dcookie": (KERNEL, "removed"), "vserver": (KERNEL, "never implemented"),
}


def markdown() -> str:
    """docs/sandbox-syscalls.md: every x86_64 system call, its decision and why."""
    lines = [
        "# Every x86_64 system call and the sandbox's seccomp filters",
        "",
        "Generated by `python -m toolmode.sandbox.syscalls` from `src/toolmode/sandbox/syscalls.py`; the test",
        "`tests/test_sandbox_syscalls.py` runs the real filters (code worker and shell, namespaces and landlock",
        "tiers) over every number and fails when this table and a filter disagree. The table is the kernel's",
        "`syscall_64.tbl` as of Linux 6.19; numbers above 470 (calls added later) are refused with ENOSYS until",
        "reviewed. x32 numbers are refused; any other architecture kills the process.",
        "",
        "Decisions: *allowed*; *allowed, arguments checked* (see the reason); *refused* with the errno the",
        "program sees; *worker: EPERM; shell: allowed*; *namespaces: allowed; landlock tier: ...* (the landlock",
        "tier, where the host's files share the sandbox's mount namespace, refuses metadata calls outright).",
        "",
        "| nr | call | decision | why |",
        "|---:|---|---|---|",
    ]
    for nr, name in sorted(TABLE.items()):
        decision, why = REVIEW[name]
        lines.append(f"| {nr} | `{name}` | {decision} | {why} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
