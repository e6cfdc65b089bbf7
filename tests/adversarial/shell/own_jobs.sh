# Not an attack: the shell still manages its own processes (pipelines, background jobs, kill by pid and via
# `jobs -p`, a process signalling itself) with the pid-taking calls restricted.
# expect: pipeline 3
# expect: killed by pid 143
# expect: killed job 143
# expect: trap TERM
echo "pipeline $(printf 'a\nb\nc\n' | sort | wc -l)"
sleep 30 & pid=$!; kill $pid; wait $pid; echo "killed by pid $?"
sleep 30 & jobs -p > jobs.txt; kill $(cat jobs.txt); wait $!; echo "killed job $?"
sh -c 'trap "echo trap TERM; exit 0" TERM; kill -TERM $$; sleep 1'
