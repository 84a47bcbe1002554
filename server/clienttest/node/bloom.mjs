// node-redis 6 with @redis/bloom against bloomery serve, on node-redis's
// default RESP3 and with RESP: 2. Usage: node bloom.mjs PORT. Prints OK.
import assert from 'node:assert/strict';
import { createClient, RESP_TYPES } from 'redis';

const port = Number(process.argv[2]);

async function run(resp) {
  const opts = { socket: { host: '127.0.0.1', port } };
  if (resp) opts.RESP = resp;
  const c = createClient(opts);
  c.on('error', (e) => { throw e; });
  await c.connect();
  const p = `r${resp ?? 'default'}:`;
  assert.equal(await c.bf.reserve(p + 'bf', 0.01, 1000), 'OK');
  assert.equal(await c.bf.add(p + 'bf', 'a'), true);
  assert.equal(await c.bf.add(p + 'bf', 'a'), false);
  assert.deepEqual(await c.bf.mAdd(p + 'bf', ['b', 'c', 'a']), [true, true, false]);
  assert.equal(await c.bf.exists(p + 'bf', 'b'), true);
  assert.deepEqual(await c.bf.mExists(p + 'bf', ['a', 'zz']), [true, false]);
  assert.equal(await c.bf.card(p + 'bf'), 3);
  const info = await c.bf.info(p + 'bf');
  const norm = (o) => JSON.parse(JSON.stringify(o instanceof Map ? Object.fromEntries(o) : o));
  assert.deepEqual(norm(info), { 'Capacity': 1000, 'Size': 1480, 'Number of filters': 1, 'Number of items inserted': 3, 'Expansion rate': 2 });
  assert.deepEqual(await c.bf.insert(p + 'bfi', ['x', 'y'], { CAPACITY: 100, ERROR: 0.001 }), [true, true]);
  // SCANDUMP / LOADCHUNK round trip.
  for (let i = 0; i < 2000; i++) await c.bf.add(p + 'big', String(i));
  // Dumps are binary: read bulk strings as Buffers (as against RedisBloom).
  const bin = c.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
  const chunks = [];
  let it = 0;
  for (;;) {
    const r = await bin.bf.scanDump(p + 'big', it);
    if (r.iterator === 0) break;
    it = r.iterator;
    chunks.push(r);
  }
  for (const ch of chunks) assert.equal(await c.bf.loadChunk(p + 'big2', ch.iterator, ch.chunk), 'OK');
  assert.deepEqual(norm(await c.bf.info(p + 'big2')), norm(await c.bf.info(p + 'big')));
  for (let i = 0; i < 2000; i += 97) assert.equal(await c.bf.exists(p + 'big2', String(i)), true);

  assert.equal(await c.cf.reserve(p + 'cf', 1000), 'OK');
  assert.equal(await c.cf.add(p + 'cf', 'a'), true);
  assert.equal(await c.cf.addNX(p + 'cf', 'a'), false);
  assert.deepEqual(await c.cf.insert(p + 'cf', ['b', 'c']), [true, true]);
  assert.deepEqual(await c.cf.insertNX(p + 'cf', ['b', 'd']), [0, 1]);
  assert.equal(await c.cf.exists(p + 'cf', 'd'), true);
  assert.equal(await c.cf.count(p + 'cf', 'a'), 1);
  assert.equal(await c.cf.del(p + 'cf', 'a'), true);
  assert.deepEqual(norm(await c.cf.info(p + 'cf')), {
    'Size': 1080, 'Number of buckets': 512, 'Number of filters': 1, 'Number of items inserted': 3,
    'Number of items deleted': 1, 'Bucket size': 2, 'Expansion rate': 1, 'Max iterations': 20,
  });
  assert.equal(await c.type(p + 'cf'), 'MBbloomCF');
  await assert.rejects(c.bf.add(p + 'cf', 'x'), /WRONGTYPE/);
  await c.quit();
}

await run(undefined); // node-redis 6 default: RESP3
await run(2);
console.log('OK');
