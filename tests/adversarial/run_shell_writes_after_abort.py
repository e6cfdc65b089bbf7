"""run_shell keeps writing (and ignores SIGTERM): a command started by a run gets at most what is left of the
run's write budget, and its writes are charged to the run: the command is stopped there and the run ends
with it, not left writing until its own timeout."""
# limits: timeout=10, max_write_mb=8
# tools: run_shell
# expect: wrote more than 8 MiB to the workspace
# max-written-mb: 16
print(run_shell("trap '' TERM; i=0; while :; do head -c 1048576 /dev/zero > w$((i % 64)).bin; i=$((i+1)); done"))
