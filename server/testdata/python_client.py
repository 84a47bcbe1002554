"""redis-py (Debian's python3-redis) bf()/cf() against bloomery serve.
Usage: python_client.py PORT. Prints OK or raises."""
import sys
import redis

r = redis.Redis(host="127.0.0.1", port=int(sys.argv[1]))
assert r.ping()
bf = r.bf()
assert bf.create("pb", 0.01, 1000)
assert bf.add("pb", "a") == 1
assert bf.add("pb", "a") == 0
assert bf.madd("pb", "b", "c", "a") == [1, 1, 0]
assert bf.exists("pb", "b") == 1
assert bf.mexists("pb", "a", "zz") == [1, 0]
assert bf.insert("pb2", ["x", "y"], capacity=500, error=0.001) == [1, 1]
info = bf.info("pb")
assert (info.capacity, info.size, info.filterNum, info.insertedNum, info.expansionRate) == (1000, 1480, 1, 3, 2), vars(info)
assert r.execute_command("BF.CARD", "pb") == 3
# SCANDUMP/LOADCHUNK round trip, the documented client loop.
chunks, it = [], 0
while True:
    it, data = bf.scandump("pb", it)
    if it == 0:
        break
    chunks.append((it, data))
for it, data in chunks:
    bf.loadchunk("pb3", it, data)
assert bf.exists("pb3", "c") == 1 and bf.info("pb3").size == 1480

cf = r.cf()
assert cf.create("pc", 1000)
assert cf.add("pc", "a") == 1
assert cf.addnx("pc", "a") == 0
assert cf.insert("pc", ["b", "c"]) == [1, 1]
assert cf.insertnx("pc", ["b", "d"]) == [0, 1]
assert cf.exists("pc", "b") == 1
assert cf.count("pc", "a") == 1
assert cf.delete("pc", "a") == 1
info = cf.info("pc")
assert (info.size, info.bucketNum, info.filterNum, info.insertedNum, info.deletedNum, info.bucketSize, info.expansionRate, info.maxIteration) == (1080, 512, 1, 3, 1, 2, 1, 20), vars(info)
assert r.type("pc") == b"MBbloomCF" and r.type("pb") == b"MBbloom--"
try:
    bf.add("pc", "x")
    raise AssertionError("no WRONGTYPE")
except redis.ResponseError as e:
    assert str(e).startswith("WRONGTYPE"), e
pipe = r.pipeline(transaction=False)
for i in range(100):
    pipe.execute_command("BF.ADD", "pp", str(i))
res = pipe.execute()
assert len(res) == 100 and sum(res) >= 95, res
print("OK")
