"""The 32-bit syscall ABI (int 0x80) on x86_64: other numbers (37 is kill), which a filter that does not
check the architecture would let through: kill(host, SIGKILL) from machine code in an executable page.
The filter kills the worker for any foreign architecture."""
# expect: killed by SIGSYS
import ctypes, mmap, os, struct
host = os.getppid()
# mov eax, 37; mov ebx, host; mov ecx, 9; int 0x80; ret
code = b"\xb8" + struct.pack("<I", 37) + b"\xbb" + struct.pack("<I", host) + b"\xb9\x09\x00\x00\x00\xcd\x80\xc3"
page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
page.write(code)
kill32 = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(page)))
print("int 0x80 kill returned", kill32(), "CHANGED")
