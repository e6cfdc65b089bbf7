"""Big-number calculator calls that would hold the host's GIL for seconds to hours (round with a huge
ndigits computes 10**10**7; huge powers, literals and chains): each must be refused at once."""
# tools: calculator
# expect: round(x, ndigits): ndigits must be between
# expect: is too large
# expect-not: FINISHED
exprs = ["round(1, -10**7)", "round(1, -(2**9999))", "round(7.5, 10**4000)", "9**9**9", "2**(2**64)",
         "(10**3000)**(10**3000)", "1" + "0" * 4000 + " * 3", "-(2**9999) ** 7", "round(2**9999, -10**6)",
         "abs(10**3000) ** 2 ** 20"]
for e in exprs:
    try:
        r = calculator(e)
        print("FINISHED", e[:30], str(r)[:20])
    except Exception as exc:
        print(type(exc).__name__, str(exc)[:120])
