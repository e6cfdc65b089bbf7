"""SysV message queues and semaphores, and POSIX message queues (issue 16, class 2): take and forge queued
messages, reset a semaphore, leave a queue behind for another sandbox to read. Refused in every tier."""
# expect: msgget -1 1
# expect: msgrcv -1 1
# expect: msgsnd -1 1
# expect: semget -1 1
# expect: semctl -1 1
# expect: mq_open -1 1
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def call(label, *args):
    ctypes.set_errno(0)
    print(label, libc.syscall(*[ctypes.c_long(a) if isinstance(a, int) else a for a in args]), ctypes.get_errno())
msg = ctypes.create_string_buffer(b"\x01\x00\x00\x00\x00\x00\x00\x00forged", 64)
call("msgget", 68, 0x70016003, 0o1000 | 0o666)  # IPC_CREAT
call("msgrcv", 70, 0, msg, 32, 0, 0o4000)  # IPC_NOWAIT, queue id 0
call("msgsnd", 69, 0, msg, 6, 0o4000)
call("semget", 64, 0x70016004, 1, 0o1000 | 0o666)
call("semctl", 66, 0, 0, 16, 0)  # SETVAL on set 0
call("mq_open", 240, b"toolmode-q", 0o100 | 2, 0o666, None)  # O_CREAT | O_RDWR
