# Slow the host down from run_shell: renice it (by pid, by user), pin it, idle scheduler, idle I/O class.
# The shell's own programs can still be started with nice / ionice (the run itself is at nice 10, so that the
# host's checks come first under CPU contention: 5 more is 15), and nproc still answers.
# expect: renice pid refused
# expect: renice user refused
# expect: taskset refused
# expect: chrt refused
# expect: ionice pid refused
# expect: ionice user refused
# expect: own nice 15
# expect: own ionice ok
# expect: nproc ok
renice -n 19 -p {{HOST}} >/dev/null 2>&1 && echo "renice pid CHANGED" || echo "renice pid refused"
renice -n 19 -u root >/dev/null 2>&1 && echo "renice user CHANGED" || echo "renice user refused"
taskset -p 1 {{HOST}} >/dev/null 2>&1 && echo "taskset CHANGED" || echo "taskset refused"
chrt -i -p 0 {{HOST}} >/dev/null 2>&1 && echo "chrt CHANGED" || echo "chrt refused"
ionice -c 3 -p {{HOST}} >/dev/null 2>&1 && echo "ionice pid CHANGED" || echo "ionice pid refused"
ionice -c 3 -u 0 >/dev/null 2>&1 && echo "ionice user CHANGED" || echo "ionice user refused"
echo "own nice $(nice -n 5 nice)"
ionice -c 3 true && echo "own ionice ok"
[ "$(nproc)" -ge 1 ] && echo "nproc ok"
