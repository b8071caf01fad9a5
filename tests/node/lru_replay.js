#!/usr/bin/env node
// Replays an LRU trace through npm lru-cache 11 configured as Claude Code configures its
// readFileState ({max, maxSize, sizeCalculation}), and prints the state after every step.
//
// Input (JSON, from the file named by argv[2], or stdin):
//   {"max": 100, "maxSize": 26214400, "maxEntrySize": null,
//    "ops": [["set", key, id, size], ["get", key], ["peek", key], ["has", key],
//            ["delete", key], ["clear"]]}
// Output (JSON): one [keys MRU->LRU, calculatedSize, result, evictions] per op, where result
// is the value id (get/peek; null on a miss), a boolean (has/delete) or null (set/clear).
'use strict';

const fs = require('node:fs');
const { LRUCache } = require('lru-cache');

const input = JSON.parse(fs.readFileSync(process.argv[2] ?? 0, 'utf8'));
let evictions = 0;
const options = {
  max: input.max,
  maxSize: input.maxSize,
  sizeCalculation: (v) => Math.max(1, v.size),
  dispose: (_v, _k, reason) => {
    if (reason === 'evict') evictions++;
  },
};
if (input.maxEntrySize) options.maxEntrySize = input.maxEntrySize;
const cache = new LRUCache(options);

const out = [];
for (const op of input.ops) {
  let result = null;
  switch (op[0]) {
    case 'set':
      cache.set(op[1], { id: op[2], size: op[3] });
      break;
    case 'get': {
      const v = cache.get(op[1]);
      result = v === undefined ? null : v.id;
      break;
    }
    case 'peek': {
      const v = cache.peek(op[1]);
      result = v === undefined ? null : v.id;
      break;
    }
    case 'has':
      result = cache.has(op[1]);
      break;
    case 'delete':
      result = cache.delete(op[1]);
      break;
    case 'clear':
      cache.clear();
      break;
    default:
      throw new Error(`unknown op ${op[0]}`);
  }
  out.push([[...cache.keys()], cache.calculatedSize, result, evictions]);
}
process.stdout.write(JSON.stringify(out));
