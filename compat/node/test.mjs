// node-redis (redis@6, @redis/bloom@6) against `bloomery serve`.
//
// Starts the server binary named by $BLOOMERY_BIN on a free loopback port with
// a temporary data directory, connects with node-redis on its default
// protocol (RESP3: node-redis 6 sends HELLO 3 and refuses to connect if HELLO
// fails) and again with RESP: 2, and checks the typed BF/CF helpers' results
// against the values in shared/reference/redisbloom.md (RedisBloom 8.x). Ends
// with a restart on the same directory: acknowledged adds are still there.
//
// Run: BLOOMERY_BIN=/path/to/bloomery node test.mjs  (compat/node_test.go does this)

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';
import { createClient, RESP_TYPES } from 'redis';
import bloomPkg from '@redis/bloom';

// A CommonJS package: its ES default is module.exports, whose .default is
// the module map ({ bf, cf, cms, topK, tDigest }).
const bloom = bloomPkg.default ?? bloomPkg;

const bin = process.env.BLOOMERY_BIN;
if (!bin) {
  console.error('BLOOMERY_BIN must name the bloomery binary');
  process.exit(2);
}
const dir = mkdtempSync(join(tmpdir(), 'bloomery-node-'));

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// startServer spawns the binary and resolves once the port accepts a connection.
async function startServer(port) {
  const proc = spawn(bin, ['serve', '--addr', `127.0.0.1:${port}`, '--dir', dir,
    '--appendfsync', 'everysec', '--log-level', 'warn'], { stdio: ['ignore', 'inherit', 'inherit'] });
  let exited = null;
  proc.on('exit', (code, sig) => { exited = `exit ${code} ${sig ?? ''}`; });
  const deadline = Date.now() + 15000;
  for (;;) {
    if (exited) throw new Error(`bloomery serve exited at start-up: ${exited}`);
    const ok = await new Promise((resolve) => {
      const c = net.connect(port, '127.0.0.1');
      c.on('connect', () => { c.destroy(); resolve(true); });
      c.on('error', () => resolve(false));
    });
    if (ok) return proc;
    if (Date.now() > deadline) { proc.kill('SIGKILL'); throw new Error('bloomery serve did not listen'); }
    await new Promise((r) => setTimeout(r, 50));
  }
}

function stopServer(proc) {
  return new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return resolve(proc.exitCode);
    proc.on('exit', (code) => resolve(code));
    proc.kill('SIGTERM');
  });
}

const port = await freePort();
let server = await startServer(port);
after(async () => {
  await stopServer(server);
  rmSync(dir, { recursive: true, force: true });
});

async function connect(resp) {
  // The `redis` package already bundles @redis/bloom; passing the installed
  // @redis/bloom explicitly makes sure that is the module under test.
  const opts = { socket: { host: '127.0.0.1', port }, modules: { ...bloom } };
  if (resp !== undefined) opts.RESP = resp;
  const client = createClient(opts);
  client.on('error', () => {}); // surfaced through the rejected commands
  await client.connect();
  return client;
}

// rejects asserts that a command fails with exactly this server error text.
async function rejects(promise, text) {
  await assert.rejects(promise, (err) => {
    assert.equal(err.message, text);
    return true;
  });
}

// The same checks for both protocols: the typed helpers hide the RESP2/RESP3
// difference (integers vs booleans, flat arrays vs maps).
async function bloomChecks(client, p) {
  const k = `${p}:bf`;
  assert.equal(await client.bf.reserve(k, 0.01, 1000), 'OK');
  await rejects(client.bf.reserve(k, 0.01, 1000), 'ERR item exists');
  assert.equal(await client.bf.add(k, 'a'), true);
  assert.equal(await client.bf.add(k, 'a'), false);
  assert.deepEqual(await client.bf.mAdd(k, ['b', 'c', 'b']), [true, true, false]);
  assert.equal(await client.bf.exists(k, 'a'), true);
  assert.equal(await client.bf.exists(k, 'never-added'), false);
  assert.deepEqual(await client.bf.mExists(k, ['a', 'b', 'c', 'never-added']), [true, true, true, false]);
  assert.equal(await client.bf.card(k), 3);
  // redisbloom.md §2.1/§2.7: RESERVE 0.01 1000 → Size 1480, one sub-filter.
  assert.deepEqual({ ...(await client.bf.info(k)) }, {
    'Capacity': 1000, 'Size': 1480, 'Number of filters': 1, 'Number of items inserted': 3, 'Expansion rate': 2,
  });
  // Auto-created with defaults: capacity 100, Size 240.
  assert.equal(await client.bf.add(`${p}:bf:auto`, ''), true);
  const auto = await client.bf.info(`${p}:bf:auto`);
  assert.equal(auto['Capacity'], 100);
  assert.equal(auto['Size'], 240);
  // INSERT with options: Size 2080 for CAPACITY 1000 ERROR 0.001.
  assert.deepEqual(await client.bf.insert(`${p}:bf:ins`, ['x', 'y', 'x'], { CAPACITY: 1000, ERROR: 0.001 }), [true, true, false]);
  assert.equal((await client.bf.info(`${p}:bf:ins`))['Size'], 2080);
  // Growth: RESERVE 0.01 100 + 1000 distinct items → 4 sub-filters, Capacity 1500.
  const g = `${p}:bf:grow`;
  await client.bf.reserve(g, 0.01, 100);
  const items = Array.from({ length: 1000 }, (_, i) => `item-${i}`);
  const added = await client.bf.mAdd(g, items);
  const gi = await client.bf.info(g);
  assert.equal(gi['Number of filters'], 4);
  assert.equal(gi['Capacity'], 1500);
  assert.equal(gi['Number of items inserted'], added.filter(Boolean).length);
  assert.equal(await client.bf.card(g), gi['Number of items inserted']);
  assert.ok((await client.bf.mExists(g, items)).every(Boolean), 'no false negatives after growth');
  // NONSCALING: Expansion rate is null.
  await client.bf.reserve(`${p}:bf:fixed`, 0.01, 10, { NONSCALING: true });
  assert.equal((await client.bf.info(`${p}:bf:fixed`))['Expansion rate'], null);
  // Missing key: EXISTS/MEXISTS answer no, CARD 0, INFO is an error.
  assert.equal(await client.bf.exists(`${p}:missing`, 'a'), false);
  assert.deepEqual(await client.bf.mExists(`${p}:missing`, ['a', 'b']), [false, false]);
  assert.equal(await client.bf.card(`${p}:missing`), 0);
  await rejects(client.bf.info(`${p}:missing`), 'ERR not found');
  await rejects(client.bf.reserve(`${p}:bad`, 2, 100), 'ERR error rate must be in the range (0.000000, 1.000000)');
  assert.equal(await client.type(k), 'MBbloom--');
  // SCANDUMP / LOADCHUNK round trip of the grown filter. Dumps are binary:
  // read bulk strings as Buffers (as against RedisBloom).
  const bin = client.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
  const chunks = [];
  for (let it = 0; ;) {
    const r = await bin.bf.scanDump(g, it);
    if (r.iterator === 0) break;
    it = r.iterator;
    chunks.push(r);
  }
  assert.ok(chunks.length >= 2, 'a header chunk and data chunks');
  const copy = `${p}:bf:copy`;
  for (const ch of chunks) assert.equal(await client.bf.loadChunk(copy, ch.iterator, ch.chunk), 'OK');
  assert.deepEqual({ ...(await client.bf.info(copy)) }, { ...gi });
  assert.ok((await client.bf.mExists(copy, items)).every(Boolean), 'no false negatives after SCANDUMP/LOADCHUNK');
}

async function cuckooChecks(client, p) {
  const k = `${p}:cf`;
  assert.equal(await client.cf.reserve(k, 1000), 'OK');
  await rejects(client.cf.reserve(k, 1000), 'ERR item exists');
  assert.equal(await client.cf.add(k, 'a'), true);
  assert.equal(await client.cf.add(k, 'a'), true); // CF.ADD always inserts
  assert.equal(await client.cf.count(k, 'a'), 2);
  assert.equal(await client.cf.addNX(k, 'a'), false);
  assert.equal(await client.cf.addNX(k, 'b'), true);
  assert.equal(await client.cf.exists(k, 'a'), true);
  assert.equal(await client.cf.exists(k, 'b'), true);
  assert.equal(await client.cf.exists(k, 'never-added'), false);
  assert.deepEqual(await client.cf.mExists(k, ['a', 'b', 'never-added']), [true, true, false]);
  assert.equal(await client.cf.del(k, 'a'), true);
  assert.equal(await client.cf.count(k, 'a'), 1);
  assert.equal(await client.cf.del(k, 'never-added'), false);
  // redisbloom.md §3.7: capacity 1000 → 512 buckets of 2, Size 1080.
  assert.deepEqual({ ...(await client.cf.info(k)) }, {
    'Size': 1080, 'Number of buckets': 512, 'Number of filters': 1, 'Number of items inserted': 2,
    'Number of items deleted': 1, 'Bucket size': 2, 'Expansion rate': 1, 'Max iterations': 20,
  });
  await client.cf.reserve(`${p}:cf:b4`, 1000, { BUCKETSIZE: 4, MAXITERATIONS: 50, EXPANSION: 3 });
  const b4 = await client.cf.info(`${p}:cf:b4`);
  assert.equal(b4['Number of buckets'], 256);
  assert.equal(b4['Bucket size'], 4);
  assert.equal(b4['Max iterations'], 50);
  assert.equal(b4['Expansion rate'], 4); // rounded up to a power of two
  // INSERT → booleans; INSERTNX → integers even in RESP3.
  assert.deepEqual(await client.cf.insert(`${p}:cf:ins`, ['x', 'y']), [true, true]);
  assert.deepEqual(await client.cf.insertNX(`${p}:cf:ins`, ['x', 'z']), [0, 1]);
  assert.equal((await client.cf.info(`${p}:cf:ins`))['Number of buckets'], 512); // auto-created: 1024
  // Missing key: EXISTS no, COUNT 0, DEL and INFO are errors.
  assert.equal(await client.cf.exists(`${p}:missing`, 'a'), false);
  assert.equal(await client.cf.count(`${p}:missing`, 'a'), 0);
  await rejects(client.cf.del(`${p}:missing`, 'a'), 'Not found');
  await rejects(client.cf.info(`${p}:missing`), 'ERR not found');
  await rejects(client.cf.reserve(`${p}:bad`, 1), 'Capacity must be in the range [2 * BUCKETSIZE, 1073741824]');
  // Wrong type: BF.ADD on a cuckoo key is WRONGTYPE, BF.EXISTS just answers no.
  await rejects(client.bf.add(k, 'a'), 'WRONGTYPE Operation against a key holding the wrong kind of value');
  assert.equal(await client.bf.exists(k, 'a'), false);
  assert.equal(await client.type(k), 'MBbloomCF');
}

test('RESP3, the default protocol', async () => {
  const client = await connect();
  try {
    // HELLO 3 succeeded (connect() fails otherwise); raw replies are RESP3 types.
    assert.equal(await client.sendCommand(['BF.ADD', 'r3:raw', 'a']), true);
    assert.deepEqual({ ...(await client.sendCommand(['BF.INFO', 'r3:raw', 'CAPACITY'])) }, { Capacity: 100 });
    await bloomChecks(client, 'r3');
    await cuckooChecks(client, 'r3');
  } finally {
    await client.close();
  }
});

test('RESP2', async () => {
  const client = await connect(2);
  try {
    assert.equal(await client.sendCommand(['BF.ADD', 'r2:raw', 'a']), 1);
    assert.deepEqual(await client.sendCommand(['BF.INFO', 'r2:raw', 'CAPACITY']), [100]);
    await bloomChecks(client, 'r2');
    await cuckooChecks(client, 'r2');
  } finally {
    await client.close();
  }
});

test('pipelined adds survive a restart', async () => {
  let client = await connect();
  const items = Array.from({ length: 2000 }, (_, i) => `p-${i}`);
  const multi = client.multi();
  // Not a transaction: execAsPipeline sends the commands back to back.
  for (const it of items) multi.bf.add('restart:bf', it);
  for (const it of items.slice(0, 500)) multi.cf.add('restart:cf', it);
  const replies = await multi.execAsPipeline();
  assert.equal(replies.length, 2500);
  await client.close();
  assert.equal(await stopServer(server), 0, 'SIGTERM exits 0');
  server = await startServer(port);
  client = await connect();
  try {
    assert.ok((await client.bf.mExists('restart:bf', items)).every(Boolean));
    assert.ok((await client.cf.mExists('restart:cf', items.slice(0, 500))).every(Boolean));
    assert.equal(await client.bf.card('restart:bf'), replies.slice(0, 2000).filter(Boolean).length);
  } finally {
    await client.close();
  }
});
