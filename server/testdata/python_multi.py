"""redis-py's default pipeline() (a MULTI/EXEC transaction) and WATCH
against bloomery serve. Usage: python_multi.py PORT. Prints OK or raises."""
import sys
import redis

r = redis.Redis(host="127.0.0.1", port=int(sys.argv[1]))
p = r.pipeline()  # transaction=True: MULTI ... EXEC
p.execute_command("BF.ADD", "tx", "a")
p.execute_command("BF.ADD", "tx", "a")
p.execute_command("BF.EXISTS", "tx", "b")
p.execute_command("CF.ADD", "txc", "x")
assert p.execute() == [1, 0, 0, 1], "pipeline"

# WATCH: a write by another client between WATCH and EXEC aborts it.
other = redis.Redis(host="127.0.0.1", port=int(sys.argv[1]))
with r.pipeline() as p:
    p.watch("tx")
    p.multi()
    p.execute_command("BF.ADD", "tx", "c")
    other.execute_command("BF.ADD", "tx", "d")
    try:
        p.execute()
        raise AssertionError("EXEC ran although a watched key changed")
    except redis.WatchError:
        pass
assert r.execute_command("BF.EXISTS", "tx", "c") == 0

# Unchanged watched key: EXEC runs.
with r.pipeline() as p:
    p.watch("tx")
    p.multi()
    p.execute_command("BF.ADD", "tx", "e")
    assert p.execute() == [1]

# A queue-time error aborts the whole transaction (EXECABORT).
p = r.pipeline()
p.execute_command("BF.ADD", "tx", "f")
p.execute_command("BF.ADD", "tx")  # wrong number of arguments
try:
    p.execute()
    raise AssertionError("EXEC ran despite a queue-time error")
except redis.ResponseError:
    pass
assert r.execute_command("BF.EXISTS", "tx", "f") == 0
print("OK")
