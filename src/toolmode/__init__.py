"""toolmode: one agent loop, three modes (react, code, hybrid), tool search, and measurements."""
