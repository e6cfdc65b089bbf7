"""Run defaults shared by the settings, the loop and the CLI (a module of its own so `toolmode --help`
imports nothing heavy). Every default lives here or in `toolmode.settings`, nowhere else."""

DEFAULT_MAX_STEPS = 10
DEFAULT_MAX_RESULT_CHARS = 4000
DEFAULT_REQUEST_TIMEOUT = 120.0  # seconds one model request may take, streamed or not
DEFAULT_IDLE_TIMEOUT = 60.0  # seconds a streamed reply that has started may send nothing before it is retried
BENCH_MAX_STEPS = 12  # a bench episode's step limit, unless its task sets one
