# Make the kernel send SIGIO (default action: terminate) to the host: an O_ASYNC pipe owned by its pid.
# Where Landlock scopes signals the kernel drops the signal; elsewhere seccomp refuses F_SETOWN on the host.
# expect: sigio attempt done
python3 -I -c "
import fcntl, os
r, w = os.pipe()
try:
    fcntl.fcntl(r, fcntl.F_SETOWN, {{HOST}})
    fcntl.fcntl(r, fcntl.F_SETFL, fcntl.fcntl(r, fcntl.F_GETFL) | os.O_ASYNC)
    os.write(w, b'x')
except OSError as e:
    print('refused', type(e).__name__)
print('sigio attempt done')"
