"""A daemon thread that keeps running after the program ends and tries to write and send later."""
# expect: started
import threading, time, gc, socket
def later():
    time.sleep(0.5)
    print("LATE OUTPUT")
    try:
        open("{{SENTINEL}}/late", "w").write("pwned")
    except OSError:
        pass
    for o in gc.get_objects():
        if isinstance(o, socket.socket):
            o.sendall(b"\xff\xff\xff\xff")
    time.sleep(3600)
threading.Thread(target=later, daemon=True).start()
print("started")
