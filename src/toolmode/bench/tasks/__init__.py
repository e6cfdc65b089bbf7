"""The built-in benchmark tasks, grouped by kind."""
