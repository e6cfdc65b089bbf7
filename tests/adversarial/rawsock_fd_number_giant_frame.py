"""Find the RPC channel by descriptor number (fstat: the only socket among the open descriptors), wrap it
in a new `_socket.socket` of the program's own and announce a 4 GiB frame."""
# expect: broke the sandbox protocol
import _socket, os, stat, time
found = []
for fd in range(256):  # /proc/self/fd cannot be listed in the sandbox: probe the numbers
    try:
        if stat.S_ISSOCK(os.fstat(fd).st_mode):
            found.append(fd)
    except OSError:
        pass
print("found socket descriptor", found)
s = _socket.socket(fileno=os.dup(found[0]))
s.sendall(b"\xff\xff\xff\xf0" + b"A" * 1000)
time.sleep(5)
