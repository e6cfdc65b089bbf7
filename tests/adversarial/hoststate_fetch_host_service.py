"""From a bench task's program, reach a service that listens on the host's loopback for the host alone
(bench tasks once allowed every private address for their fixture server). Must be refused."""
# tools: fetch_url
# expect: refused
try:
    page = fetch_url("{{HOST_SERVICE}}/admin")
    print("OPENED", page.get("text", "")[:80])
except Exception as exc:
    print("refused:", type(exc).__name__, str(exc)[:160])
