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
queries = 0  # cursor-position queries answered
def pump(t):
    global out, queries
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
        n = data.count(b"\x1b[6n")
        if n:
            queries += n
            os.write(fd, b"\x1b[1;1R" * n)
    return True
def wait_for(marker, timeout):
    end = time.time() + timeout
    while marker not in out and time.time() < end:
        if not pump(0.1):
            return

def wait_query(q0, timeout):
    end = time.time() + timeout
    while queries <= q0 and time.time() < end:
        if not pump(0.1):
            return

# Wait for the first prompt, then type each command; an ECHO of a marker at
# the end tells when every reply has been printed (redis-cli is sequential).
# Each new prompt starts with a cursor-position query (the pty has no window
# size); the next command is typed only after that query was answered, or
# linenoise would read the typed keys as a malformed answer and drop them.
wait_for(b"> ", 15)
for c in cmds + ["echo __END__"]:
    q0 = queries
    os.write(fd, c.encode() + b"\r")
    wait_query(q0, 5)
    pump(0.05)
wait_for(b'"__END__"', 30)
os.write(fd, b"quit\r")
pump(0.3)
try:
    os.kill(pid, 9)
except OSError:
    pass
sys.stdout.write(out.replace(b"\x1b[6n", b"").decode("utf-8", "replace"))
