"""Run defaults shared by the loop and the CLI (a module of its own so `toolmode --help` imports nothing heavy)."""

DEFAULT_MAX_STEPS = 10
DEFAULT_MAX_RESULT_CHARS = 4000
DEFAULT_IDLE_TIMEOUT = 60.0  # seconds a streamed reply that has started may send nothing before it is retried
