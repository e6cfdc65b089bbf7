"""run_shell with a long command and its own long timeout: the run's deadline (2 s) must end it, and the
shell (a background writer that detached from the shell) must not outlive the run."""
# tools: run_shell
# expect: timed out after 2 s
# expect: the host tool 'run_shell' was still running
print(run_shell("(while :; do echo x >> late.txt; sleep 0.01; done) & sleep 600", timeout=600))
