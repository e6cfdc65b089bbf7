"""An infinite loop in Python that also swallows every exception."""
# expect: timed out after
while True:
    try:
        while True:
            pass
    except BaseException:
        pass
