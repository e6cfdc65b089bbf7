"""Blow the C stack (recursion limit lifted, each level re-enters the C evaluator through eval): the worker
crashes, the host reports it and replaces the worker."""
# expect: SIGSEGV
# expect: the worker was restarted
import sys
sys.setrecursionlimit(10**8)
def deeper():
    return eval("deeper()")
deeper()
