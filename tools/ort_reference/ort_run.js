#!/usr/bin/env node
// The float32 oracle for accuracy tests: runs an ONNX model with ONNX Runtime
// (CPU execution provider) on .npy inputs and writes each output as .npy.
// A reference tool only: nothing in the library or its build depends on it.
//
// usage: node ort_run.js MODEL.onnx OUT_DIR IN0.npy [IN1.npy ...] [--threads N]
//   inputs are float32 .npy files, one per model input in the model's order;
//   outputs are written as OUT_DIR/<k>.npy (float32, C order), k = output index.
// ONNX Runtime is looked up with require(), or from ORT_NODE_MODULES
// (the folder holding node_modules/onnxruntime-node).
'use strict';

const fs = require('fs');
const path = require('path');

function loadOrt() {
  const roots = [];
  if (process.env.ORT_NODE_MODULES) roots.push(path.join(process.env.ORT_NODE_MODULES, 'node_modules'));
  for (const root of roots) {
    try { return require(path.join(root, 'onnxruntime-node')); } catch (e) { /* next */ }
  }
  return require('onnxruntime-node');
}

function fail(message) {
  console.error('ort_run: ' + message);
  process.exit(1);
}

// Reads a float32 C-order .npy file (versions 1-3).
function readNpy(file) {
  const bytes = fs.readFileSync(file);
  if (bytes.length < 10 || bytes.toString('latin1', 0, 6) !== '\x93NUMPY') fail(`${file}: not a .npy file`);
  const major = bytes[6];
  const headerLen = major === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12) + headerLen;
  const header = bytes.toString('latin1', major === 1 ? 10 : 12, start);
  const descr = /'descr':\s*'([^']+)'/.exec(header);
  const order = /'fortran_order':\s*(True|False)/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !order || !shape) fail(`${file}: bad .npy header`);
  if (descr[1] !== '<f4' || order[1] !== 'False') fail(`${file}: needs float32 in C order, has ${descr[1]}`);
  const dims = shape[1].split(',').map(s => s.trim()).filter(s => s.length).map(Number);
  const count = dims.reduce((a, b) => a * b, 1);
  if (start + count * 4 > bytes.length) fail(`${file}: shorter than its header says`);
  const data = new Float32Array(count);
  for (let i = 0; i < count; i++) data[i] = bytes.readFloatLE(start + 4 * i);
  return { dims, data };
}

function writeNpy(file, dims, data) {
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${dims.join(', ')}${dims.length === 1 ? ',' : ''}), }`;
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1; head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  const body = Buffer.from(Float32Array.from(data).buffer);
  fs.writeFileSync(file, Buffer.concat([head, Buffer.from(header, 'latin1'), body]));
}

async function main() {
  const args = process.argv.slice(2);
  let threads = 1;
  const positional = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--threads') threads = Number(args[++i]);
    else positional.push(args[i]);
  }
  if (positional.length < 3) fail('usage: node ort_run.js MODEL.onnx OUT_DIR IN0.npy [IN1.npy ...] [--threads N]');
  const [model, outDir, ...inputs] = positional;
  const ort = loadOrt();
  const session = await ort.InferenceSession.create(model, { intraOpNumThreads: threads, interOpNumThreads: 1 });
  if (inputs.length !== session.inputNames.length)
    fail(`the model has ${session.inputNames.length} inputs; ${inputs.length} files given`);
  const feeds = {};
  session.inputNames.forEach((name, k) => {
    const { dims, data } = readNpy(inputs[k]);
    feeds[name] = new ort.Tensor('float32', data, dims);
  });
  const results = await session.run(feeds);
  fs.mkdirSync(outDir, { recursive: true });
  session.outputNames.forEach((name, k) => {
    const t = results[name];
    writeNpy(path.join(outDir, `${k}.npy`), t.dims, t.data);
  });
}

main().catch(e => fail(e.message || String(e)));
