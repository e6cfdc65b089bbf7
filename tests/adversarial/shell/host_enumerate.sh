# Enumerate and probe processes outside the run: /proc, ps, and by pid (session, group, priority, pidfd).
# expect: proc list refused
# expect: proc host refused
# expect: getsid PermissionError
# expect: getpgid PermissionError
# expect: getpriority PermissionError
# expect: affinity PermissionError
# expect: pidfd PermissionError
# expect: own session ok
ls /proc >/dev/null 2>&1 && echo "proc list LEAKED" || echo "proc list refused"
cat /proc/{{HOST}}/status >/dev/null 2>&1 && echo "proc host LEAKED" || echo "proc host refused"
python3 -I -c "
import os
host = {{HOST}}
for label, action in [('getsid', lambda: os.getsid(host)), ('getpgid', lambda: os.getpgid(host)),
                      ('getpriority', lambda: os.getpriority(os.PRIO_PROCESS, host)),
                      ('affinity', lambda: os.sched_getaffinity(host)), ('pidfd', lambda: os.pidfd_open(host))]:
    try:
        print(label, 'LEAKED', action())
    except OSError as e:
        print(label, type(e).__name__)
assert os.getsid(0) == os.getpgid(0)
print('own session ok')"
