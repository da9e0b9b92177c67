#!/usr/bin/env node
// Comparison baseline only: times ONNX Runtime (CPU execution provider, float32)
// on ONNX models, for the benchmark table in the OpenRKNN notes. Not used by the
// library or its tests.
//
// Usage:
//   node ort_bench.js MODEL.onnx [MODEL2.onnx ...] [--threads N] [--runs R]
//                     [--warmup W] [--shape name=1,3,224,224 ...]
//
// Input shapes come from the session's input metadata; --shape overrides them
// (and is required for inputs with symbolic dimensions).
'use strict';

const path = require('path');
const ort = require('onnxruntime-node');

function usage(msg) {
  if (msg) console.error('error: ' + msg);
  console.error('usage: node ort_bench.js MODEL.onnx [MODEL2.onnx ...] [--threads N] [--runs R] ' +
                '[--warmup W] [--shape name=d0,d1,...]');
  process.exit(2);
}

function parsePositiveInt(flag, text, allowZero) {
  const v = Number(text);
  if (!Number.isInteger(v) || v < (allowZero ? 0 : 1)) usage(`${flag} expects an integer, got "${text}"`);
  return v;
}

function parseArgs(argv) {
  const opts = { threads: 2, runs: 20, warmup: 5, shapes: new Map(), models: [] };
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i];
    let value;
    const eq = arg.indexOf('=');
    if (arg.startsWith('--') && eq > 0 && arg !== '--shape') {
      // Accept both "--runs 20" and "--runs=20" (but "--shape=a=1,2" too).
      value = arg.slice(eq + 1);
      arg = arg.slice(0, eq);
    }
    const next = () => {
      if (value !== undefined) return value;
      if (i + 1 >= argv.length) usage(`${arg} needs a value`);
      return argv[++i];
    };
    switch (arg) {
      case '--threads': opts.threads = parsePositiveInt(arg, next(), false); break;
      case '--runs': opts.runs = parsePositiveInt(arg, next(), false); break;
      case '--warmup': opts.warmup = parsePositiveInt(arg, next(), true); break;
      case '--shape': {
        const spec = next();
        const m = /^([^=]+)=(\d+(?:,\d+)*)$/.exec(spec);
        if (!m) usage(`bad --shape "${spec}" (expected name=1,3,224,224)`);
        opts.shapes.set(m[1], m[2].split(',').map(Number));
        break;
      }
      case '-h': case '--help': usage(); break;
      default:
        if (arg.startsWith('-')) usage(`unknown option ${arg}`);
        opts.models.push(arg);
    }
  }
  if (opts.models.length === 0) usage('no model given');
  return opts;
}

// Small deterministic PRNG (mulberry32) so that every run feeds the same data.
function makeRng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Returns the input shapes, from --shape if given, else from the session metadata.
function inputShapes(session, opts) {
  const meta = Array.isArray(session.inputMetadata) ? session.inputMetadata : [];
  return session.inputNames.map((name) => {
    if (opts.shapes.has(name)) return { name, shape: opts.shapes.get(name), type: 'float32' };
    const md = meta.find((m) => m && m.name === name);
    if (!md || !Array.isArray(md.shape)) {
      throw new Error(`no shape metadata for input "${name}"; pass --shape ${name}=d0,d1,...`);
    }
    const bad = md.shape.filter((d) => typeof d !== 'number' || d < 1);
    if (bad.length) {
      throw new Error(`input "${name}" has symbolic dims ${JSON.stringify(md.shape)}; ` +
                      `pass --shape ${name}=d0,d1,...`);
    }
    return { name, shape: md.shape, type: md.type || 'float32' };
  });
}

function makeFeeds(inputs, seed) {
  const rng = makeRng(seed);
  const feeds = {};
  for (const { name, shape, type } of inputs) {
    if (type !== 'float32') throw new Error(`input "${name}" is ${type}; only float32 is supported`);
    const n = shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(n);
    for (let k = 0; k < n; k++) data[k] = rng() * 4 - 2; // roughly the range of normalised pixels
    feeds[name] = new ort.Tensor('float32', data, shape);
  }
  return feeds;
}

function stats(ms) {
  const sorted = [...ms].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  const mean = ms.reduce((a, b) => a + b, 0) / ms.length;
  return { median, mean, min: sorted[0] };
}

async function benchModel(modelPath, opts) {
  const session = await ort.InferenceSession.create(modelPath, {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: opts.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
  });
  try {
    const feeds = makeFeeds(inputShapes(session, opts), 1234);
    for (let i = 0; i < opts.warmup; i++) await session.run(feeds);
    const times = [];
    for (let i = 0; i < opts.runs; i++) {
      const t0 = process.hrtime.bigint();
      await session.run(feeds);
      const t1 = process.hrtime.bigint();
      times.push(Number(t1 - t0) / 1e6);
    }
    const s = stats(times);
    const name = path.basename(modelPath).replace(/\.onnx$/i, '');
    console.log(`ort ${name} threads=${opts.threads} median_ms=${s.median.toFixed(2)} ` +
                `mean_ms=${s.mean.toFixed(2)} min_ms=${s.min.toFixed(2)}`);
  } finally {
    if (typeof session.release === 'function') await session.release();
  }
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  let failed = 0;
  for (const model of opts.models) {
    try {
      await benchModel(model, opts);
    } catch (err) {
      failed++;
      console.error(`ort ${path.basename(model)}: ${err && err.message ? err.message : err}`);
    }
  }
  process.exit(failed ? 1 : 0);
}

main();
