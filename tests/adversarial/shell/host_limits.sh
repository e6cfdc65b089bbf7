# Re-limit the host from run_shell: util-linux prlimit and Python's resource.prlimit on its pid.
# Its own limits stay adjustable (ulimit, prlimit without --pid).
# expect: prlimit nofile refused
# expect: prlimit cpu refused
# expect: prlimit read refused
# expect: python prlimit PermissionError
# expect: own ulimit 64
# expect: own prlimit ok
prlimit --pid {{HOST}} --nofile=8:8 2>/dev/null && echo "prlimit nofile CHANGED" || echo "prlimit nofile refused"
prlimit --pid {{HOST}} --cpu=1:1 2>/dev/null && echo "prlimit cpu CHANGED" || echo "prlimit cpu refused"
prlimit --pid {{HOST}} --nofile 2>/dev/null && echo "prlimit read LEAKED" || echo "prlimit read refused"
python3 -I -c "
import resource
try:
    resource.prlimit({{HOST}}, resource.RLIMIT_AS, (1 << 20, 1 << 20)); print('python prlimit CHANGED')
except OSError as e:
    print('python prlimit', type(e).__name__)"
(ulimit -n 64 && echo "own ulimit $(ulimit -n)")
prlimit --nofile=100 true && echo "own prlimit ok"
