#!/usr/bin/env node
// B1 in Node: the trace written by bench/b1_cache.py replayed through npm lru-cache configured
// as Claude Code configures readFileState: {max, maxSize, sizeCalculation}. Values are
// FileState-shaped objects made once per path (content objects reused); sizeCalculation returns
// the precomputed byte length, as the other implementations get it.
//
// usage: node bench/b1_cache.js TRACE_FILE [REPEATS]   (run with tests/node/node_modules)
// prints one JSON line: {"ops", "hits", "evictions", "ns_per_op_min", "ns_per_op_median"}
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { LRUCache } = require(
  require.resolve('lru-cache', { paths: [path.join(__dirname, '..', 'tests', 'node')] }),
);

const SET_BIT = 0x8000;

function readTrace(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 0, 8) !== 'PCB1TRC\0') throw new Error(`${file}: not a B1 trace`);
  let at = 8;
  const u32 = () => {
    const v = buf.readUInt32LE(at);
    at += 4;
    return v;
  };
  const version = u32();
  if (version !== 1) throw new Error(`${file}: unsupported trace version ${version}`);
  const nPaths = u32();
  const nOps = u32();
  const max = u32();
  const maxSize = Number(buf.readBigUInt64LE(at));
  at += 8;
  const sizes = [];
  for (let i = 0; i < nPaths; i++, at += 8) sizes.push(Number(buf.readBigUInt64LE(at)));
  const paths = [];
  for (let i = 0; i < nPaths; i++) {
    const len = u32();
    paths.push(buf.toString('utf8', at, at + len));
    at += len;
  }
  const ops = new Uint16Array(nOps);
  for (let i = 0; i < nOps; i++, at += 2) ops[i] = buf.readUInt16LE(at);
  return { max, maxSize, sizes, paths, ops };
}

function replay(t, values) {
  let evictions = 0;
  const cache = new LRUCache({
    max: t.max,
    maxSize: t.maxSize,
    sizeCalculation: (v) => Math.max(1, v.size),
    dispose: (_v, _k, reason) => {
      if (reason === 'evict') evictions++;
    },
  });
  const { ops, paths } = t;
  let hits = 0;
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i];
    const index = op & ~SET_BIT;
    const key = paths[index];
    if ((op & SET_BIT) === 0 && cache.get(key) !== undefined) {
      hits++;
      continue;
    }
    cache.set(key, values[index]);
  }
  return { hits, evictions };
}

const trace = readTrace(process.argv[2]);
const repeats = Math.max(1, Number(process.argv[3] ?? 5));
const values = trace.sizes.map((size, i) => ({
  content: trace.paths[i], // stands in for the text; its length is not what is accounted
  timestamp: 1_700_000_000_000 + i,
  offset: 1,
  limit: undefined,
  isPartialView: false,
  size,
}));
const first = replay(trace, values); // warm-up (JIT), and the counts
const samples = [];
for (let r = 0; r < repeats; r++) {
  const t0 = process.hrtime.bigint();
  const got = replay(trace, values);
  const ns = Number(process.hrtime.bigint() - t0) / trace.ops.length;
  if (got.hits !== first.hits) throw new Error('replays disagree');
  samples.push(ns);
}
samples.sort((a, b) => a - b);
process.stdout.write(
  JSON.stringify({
    ops: trace.ops.length,
    hits: first.hits,
    evictions: first.evictions,
    ns_per_op_min: samples[0],
    ns_per_op_median: samples[Math.floor(samples.length / 2)],
  }) + '\n',
);
