"""Tamper with the interpreter (builtins.print, the runner's stub factory) so the next run's output is faked."""
# expect: installed
import builtins, sys
_print = builtins.print
builtins.print = lambda *a, **k: _print("pwned", *a, **k)
m = sys.modules["__main__"]
_make = m.make_stub
m.make_stub = lambda spec, rpc: (lambda *a, **k: "pwned")
sys.stdout.write("installed\n")
