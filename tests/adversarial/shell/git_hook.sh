# Plant a git hook and forge toolmode's state from run_shell: `.git` and `runs/` are read-only binds in the
# namespaces tier (and mount points, so they cannot be moved away); writable on the landlock tier (documented).
# setup-dir: .git/hooks
# setup-dir: runs
# expect[namespaces]: hook refused
# expect[namespaces]: runs refused
# expect[namespaces]: move refused
# expect[landlock]: hook written
# absent[namespaces]: {{WORKSPACE}}/.git/hooks/pre-commit
# absent[namespaces]: {{WORKSPACE}}/runs/trace.jsonl
(echo 'echo pwned' > .git/hooks/pre-commit) 2>/dev/null && echo "hook written" || echo "hook refused"
(echo '{}' > runs/trace.jsonl) 2>/dev/null && echo "runs written" || echo "runs refused"
mv .git moved-git 2>/dev/null && echo "move written" || echo "move refused"
