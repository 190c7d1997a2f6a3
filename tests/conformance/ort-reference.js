#!/usr/bin/env node
// ort-reference.js - onnxruntime-node (CPU EP, one thread) reference runs for ONNX models, on the
// seeded inputs that `vkc run --random SEED` generates (OrtRandom, compiler/tools/tensor_file.cpp).
//
//   node tests/conformance/ort-reference.js MODEL.onnx [MODEL.onnx ...]
//
// For each model it prints one JSON line on stdout:
//   {"model", "load_ms", "inputs": {name: [dtype, dims]}, "first_run_ms", "steady_run_ms",
//    "outputs": {name: [dtype, dims]}, "all_finite", "ok"}   ("ok": false and "error" on a failure)
// steady_run_ms is the fastest run after the first (4 runs, 2 for a model over 20 MB). A model that
// fails gets its line too, so the exit status is 0 whenever the arguments and environment were
// usable (2 otherwise, with a message on stderr).
//
// Environment:
//   ORT_DUMP=DIR         also write DIR/<model file name without .onnx>/ with input_<i>.bin and
//                        output_<i>.bin (raw little-endian elements, in the session's input / output
//                        order) and manifest.json ({model, inputs, outputs}: name, dtype, dims, file).
//                        `vkc run X.pte --input 0=input_0.bin ... --expect DIR/<model>` checks against it.
//   ORT_SEED=N           the generator's seed (default 12345), restarted for every model, so that
//                        `vkc run --random N` feeds the same values.
//   ORT_INPUT_SHAPES     "name=1x3x640x640 other=1x512": shapes for inputs with symbolic or unknown
//                        dims, in vkc's --input-shape syntax. Otherwise KNOWN_SHAPES below applies
//                        (by model file name), and any dim still unknown becomes 1.
//   ORT_INPUT_VALUES     "sr=16000 flag=1": inputs fed these values (comma-separated), as vkc compile
//                        --input-value binds them. They draw nothing from the generator and are left
//                        out of ORT_DUMP's inputs (the .pte has no such input), which are numbered
//                        without them.
//
// Inputs, dtype by dtype (as OrtRandom::tensor): float32 gets next() * 2 - 1 rounded to f32;
// float64 and float16 get that f32 value widened / rounded to nearest even; every other dtype
// (integers, bool) gets zeros and draws nothing from the generator. Inputs are filled in the
// session's input order, which is the order of the graph's inputs and of the .pte's inputs.
//
// onnxruntime-node comes from NODE_PATH; install it outside the repository, e.g.
//   ONNXRUNTIME_NODE_INSTALL=skip npm install --prefix ~/.cache/vkc-bench onnxruntime-node@1.30.0
//   export NODE_PATH=~/.cache/vkc-bench/node_modules
// (ONNXRUNTIME_NODE_INSTALL=skip: the CPU EP ships in the package; its install script would
// otherwise try to download CUDA libraries from outside the npm registry).
'use strict';

const fs = require('fs');
const path = require('path');

// Shapes for the dev models' symbolic dims (tests/models/dev_models.txt compiles them the same way).
const KNOWN_SHAPES = [
  { file: /PP-OCRv4_det/, shapes: { x: [1, 3, 640, 640] } },
  { file: /PP-OCRv4_rec/, shapes: { x: [1, 3, 48, 320] } },
  { file: /ppocr_mobile_v2\.0_cls/, shapes: { x: [1, 3, 48, 192] } },
  { file: /melspectrogram/, shapes: { input: [1, 1760] } },
  { file: /embedding_model/, shapes: { input_1: [1, 76, 32, 1] } },
  { file: /silero_vad/, shapes: { input: [1, 512], state: [2, 1, 128], h: [2, 1, 64], c: [2, 1, 64] } },
];

// --- the generator ------------------------------------------------------------------------------------
// A 31-bit LCG evaluated the way JavaScript evaluates `(s * 1103515245 + 12345) & 0x7fffffff`: the
// product and sum are doubles (rounded once the product passes 2^53), `&` takes them modulo 2^32.
// OrtRandom::next() in compiler/tools/tensor_file.cpp is written to give the same sequence.
class SeededRandom {
  constructor(seed) {
    if (!Number.isSafeInteger(seed) || seed < 0 || seed > 0xffffffff)
      throw new Error(`seed ${seed}: want an integer in [0, 2^32)`);
    this.state = seed;
  }
  next() { // in [0, 1]
    this.state = (this.state * 1103515245 + 12345) & 0x7fffffff;
    return this.state / 0x7fffffff;
  }
}

// f32 -> IEEE half, round to nearest even (as vkc::ir::float_to_half).
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
function halfBits(x) {
  f32[0] = x;
  const bits = u32[0];
  const sign = (bits >>> 16) & 0x8000;
  const abs = bits & 0x7fffffff;
  if (abs >= 0x7f800000) return sign | 0x7c00 | (abs > 0x7f800000 ? 0x200 : 0);
  if (abs >= 0x477ff000) return sign | 0x7c00;
  if (abs < 0x38800000) { // below the smallest normal half: subnormal or zero
    if (abs < 0x33000000) return sign;
    const mant = (abs & 0x7fffff) | 0x800000;
    const shift = 126 - (abs >>> 23);
    let h = mant >>> shift;
    const rest = mant & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    if (rest > halfway || (rest === halfway && (h & 1))) h += 1;
    return sign | h;
  }
  let h = (abs - 0x38000000) >>> 13;
  const rest = abs & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (h & 1))) h += 1;
  return sign | h;
}

// Typed-array constructors of onnxruntime-node's tensor types that take zeros.
const ZERO_FILLED = {
  bool: Uint8Array, int8: Int8Array, uint8: Uint8Array, int16: Int16Array, uint16: Uint16Array,
  int32: Int32Array, uint32: Uint32Array, int64: BigInt64Array, uint64: BigUint64Array,
};

// The values OrtRandom::tensor gives an input of `type` with n elements.
function seededData(type, n, rng) {
  switch (type) {
    case 'float32': {
      const a = new Float32Array(n);
      for (let i = 0; i < n; i++) a[i] = rng.next() * 2 - 1;
      return a;
    }
    case 'float64': {
      const a = new Float64Array(n);
      for (let i = 0; i < n; i++) a[i] = Math.fround(rng.next() * 2 - 1);
      return a;
    }
    case 'float16': { // bit patterns; onnxruntime-node takes a Uint16Array for float16
      const a = new Uint16Array(n);
      for (let i = 0; i < n; i++) a[i] = halfBits(rng.next() * 2 - 1);
      return a;
    }
    default:
      if (ZERO_FILLED[type]) return new ZERO_FILLED[type](n);
      throw new Error(`input dtype ${type} is not supported`);
  }
}

// --- shapes ---------------------------------------------------------------------------------------------
function parseShapes(text) {
  const out = {};
  for (const item of (text || '').split(/[\s,;]+/).filter(Boolean)) {
    const m = /^([^=]+)=(\d+(?:x\d+)*)$/.exec(item);
    if (!m) throw new Error(`ORT_INPUT_SHAPES: '${item}' is not NAME=DxDx...`);
    out[m[1]] = m[2].split('x').map(Number);
  }
  return out;
}

function parseValues(text) {
  const out = {};
  for (const item of (text || '').split(/\s+/).filter(Boolean)) {
    const m = /^([^=]+)=(.+)$/.exec(item);
    if (!m) throw new Error(`ORT_INPUT_VALUES: '${item}' is not NAME=V[,V...]`);
    out[m[1]] = m[2].split(',');
  }
  return out;
}

// An input bound to `values` (strings), in its type and shape.
function boundTensor(ort, meta, dims, values) {
  const n = dims.reduce((a, b) => a * b, 1);
  if (n !== values.length) dims = meta.shape && meta.shape.length === 0 && values.length === 1 ? [] : [values.length];
  const type = meta.type;
  const data = type === 'int64' ? BigInt64Array.from(values.map(v => BigInt(v)))
    : type === 'float32' ? Float32Array.from(values.map(Number))
      : type === 'float64' ? Float64Array.from(values.map(Number))
        : ZERO_FILLED[type] ? ZERO_FILLED[type].from(values.map(v => (v === 'true' ? 1 : v === 'false' ? 0 : Number(v))))
          : null;
  if (!data) throw new Error(`ORT_INPUT_VALUES: input ${meta.name} of type ${type} cannot be bound`);
  return new ort.Tensor(type, data, dims);
}

function inputShape(meta, file, given) {
  let dims = meta.shape || [];
  if (given[meta.name]) dims = given[meta.name];
  else for (const k of KNOWN_SHAPES) if (k.file.test(path.basename(file)) && k.shapes[meta.name]) dims = k.shapes[meta.name];
  return dims.map(d => (typeof d === 'number' && Number.isInteger(d) && d > 0 ? d : 1));
}

// --- one model ------------------------------------------------------------------------------------------
const msSince = t0 => Number(process.hrtime.bigint() - t0) / 1e6;

async function reference(ort, file, seed, given, bound = {}) {
  const rec = { model: file };
  let t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(file, {
    executionProviders: ['cpu'], intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'all',
  });
  rec.load_ms = msSince(t0);
  try {
    const rng = new SeededRandom(seed);
    const metaByName = new Map((session.inputMetadata || []).map(m => [m.name, m]));
    const feeds = {};
    rec.inputs = {};
    for (const name of session.inputNames) {
      const meta = metaByName.get(name);
      if (!meta || meta.isTensor === false) throw new Error(`input ${name} is not a tensor`);
      const dims = inputShape(meta, file, given);
      const n = dims.reduce((a, b) => a * b, 1);
      feeds[name] = bound[name] ? boundTensor(ort, meta, dims, bound[name])
        : new ort.Tensor(meta.type, seededData(meta.type, n, rng), dims);
      rec.inputs[name] = [meta.type, feeds[name].dims];
    }
    const runs = fs.statSync(file).size > 20e6 ? 2 : 4;
    const times = [];
    let results;
    for (let r = 0; r < runs; r++) {
      t0 = process.hrtime.bigint();
      results = await session.run(feeds);
      times.push(msSince(t0));
    }
    rec.first_run_ms = times[0];
    rec.steady_run_ms = Math.min(...times.slice(1));
    rec.outputs = {};
    let finite = true;
    for (const name of session.outputNames) {
      const t = results[name];
      rec.outputs[name] = [t.type, t.dims];
      if (t.type === 'float32' || t.type === 'float64') finite = finite && t.data.every(Number.isFinite);
    }
    rec.all_finite = finite;
    if (process.env.ORT_DUMP) {
      const fed = session.inputNames.filter(name => !bound[name]);
      dump(path.join(process.env.ORT_DUMP, path.basename(file, '.onnx')), file, session, fed, feeds, results);
    }
    rec.ok = true;
  } finally {
    await session.release();
  }
  return rec;
}

function dump(dir, file, session, inputNames, feeds, results) {
  fs.mkdirSync(dir, { recursive: true });
  const manifest = { model: path.basename(file), inputs: [], outputs: [] };
  const write = (list, prefix, names, tensors) => names.forEach((name, i) => {
    const t = tensors[name];
    if (t.type === 'string') throw new Error(`${prefix} ${name}: string tensors cannot be dumped`);
    const fileName = `${prefix}_${i}.bin`;
    // typed arrays are little-endian on every platform onnxruntime-node ships for
    fs.writeFileSync(path.join(dir, fileName), Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
    list.push({ name, dtype: t.type, dims: t.dims, file: fileName });
  });
  write(manifest.inputs, 'input', inputNames, feeds);
  write(manifest.outputs, 'output', session.outputNames, results);
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest, null, 1) + '\n');
}

async function main() {
  const files = process.argv.slice(2);
  if (files.length === 0 || files.some(f => f === '-h' || f === '--help')) {
    console.error('usage: [ORT_DUMP=DIR] [ORT_SEED=N] [ORT_INPUT_SHAPES="x=1x3x8x8 ..."] [ORT_INPUT_VALUES="sr=16000 ..."] node ort-reference.js MODEL.onnx ...');
    process.exit(files.length === 0 ? 2 : 0);
  }
  const seedText = process.env.ORT_SEED || '12345';
  if (!/^\d+$/.test(seedText)) throw new Error(`ORT_SEED=${seedText}: want a non-negative integer`);
  const seed = Number(seedText);
  const given = parseShapes(process.env.ORT_INPUT_SHAPES);
  const bound = parseValues(process.env.ORT_INPUT_VALUES);
  const ort = require('onnxruntime-node');
  ort.env.logLevel = 'error';
  for (const file of files) {
    let rec;
    try {
      rec = await reference(ort, file, seed, given, bound);
    } catch (e) {
      rec = { model: file, ok: false, error: String(e && e.message || e).slice(0, 300) };
    }
    console.log(JSON.stringify(rec));
  }
}

main().catch(e => { console.error(`ort-reference.js: ${e && e.message || e}`); process.exit(2); });
