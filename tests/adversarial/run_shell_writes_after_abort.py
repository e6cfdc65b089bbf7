"""run_shell keeps writing (and ignores SIGTERM) after the run is aborted by the write budget: its
process group must be stopped with the run, not left writing until its own timeout."""
# limits: timeout=10, max_write_mb=8
# tools: run_shell
# expect: wrote more than 8 MiB to the workspace
# expect: the host tool 'run_shell' was still running
print(run_shell("trap '' TERM; i=0; while :; do head -c 1048576 /dev/zero > w$((i % 64)).bin; i=$((i+1)); done"))
