"""A tmpfs mounted inside the workspace would hold writes the budget does not see (issue 16, class 5). Every
way to mount is refused: mount(2), the new mount API, a user namespace of one's own first (no capabilities are
left, and the filter refuses new namespaces). The harness checks that no mount appears in the workspace."""
# expect: mount -1 1
# expect: fsopen -1 1
# expect: unshare -1 1
# expect: clone newns -1 1
import ctypes, os
os.makedirs("mnt", exist_ok=True)
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def call(label, *args):
    ctypes.set_errno(0)
    print(label, libc.syscall(*[ctypes.c_long(a) if isinstance(a, int) else a for a in args]), ctypes.get_errno())
call("mount", 165, b"none", os.path.abspath("mnt").encode(), b"tmpfs", 0, b"size=1g")
call("fsopen", 430, b"tmpfs", 0)
call("unshare", 272, 0x10000000 | 0x00020000)  # CLONE_NEWUSER | CLONE_NEWNS
call("clone newns", 56, 0x00020000 | 17, 0, 0, 0, 0)  # CLONE_NEWNS | SIGCHLD
