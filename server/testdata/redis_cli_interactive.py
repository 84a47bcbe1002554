"""Drive redis-cli interactively through a pseudo-terminal (as a person
would), answering the terminal's cursor-position queries, and print what
it displayed. Usage: redis_cli_interactive.py PORT [-3] < commands"""
import os, pty, select, sys, time

port = sys.argv[1]
extra = sys.argv[2:]
cmds = sys.stdin.read().splitlines()
pid, fd = pty.fork()
if pid == 0:
    os.execvp("redis-cli", ["redis-cli", "-p", port] + extra)
out = b""
def pump(t):
    global out
    end = time.time() + t
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.05)
        if not r:
            continue
        try:
            data = os.read(fd, 65536)
        except OSError:
            return False
        if not data:
            return False
        out += data
        if b"\x1b[6n" in data:
            os.write(fd, b"\x1b[1;1R")
    return True
pump(1.0)
for c in cmds:
    os.write(fd, c.encode() + b"\r")
    if not pump(0.5):
        break
os.write(fd, b"quit\r")
pump(0.5)
try:
    os.kill(pid, 9)
except OSError:
    pass
sys.stdout.write(out.replace(b"\x1b[6n", b"").decode("utf-8", "replace"))
