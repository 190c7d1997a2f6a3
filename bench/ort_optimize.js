#!/usr/bin/env node
// ort_optimize.js - onnxruntime's offline graph optimization of one model, as a whole process to be timed.
//
//   node ort_optimize.js MODEL OUT.onnx [--level all|extended|basic|disabled] [--dim NAME=VALUE ...]
//
// Creates one InferenceSession (CPU EP, 1 intra-op and 1 inter-op thread) with optimizedModelFilePath=OUT,
// which makes ORT run its graph optimizers at the given level (default: all) and write the optimized model,
// then exits. --dim fixes a symbolic dimension (freeDimensionOverrides), e.g. --dim p2o.DynamicDimension.1=640.
// Prints one line to stdout: `session_create_s=<seconds>` (time inside the process, excluding node start-up
// and loading onnxruntime). onnxruntime-node must be resolvable by require() (compile_bench.sh sets NODE_PATH).
'use strict';

function usage(msg) {
  if (msg) console.error(`ort_optimize.js: ${msg}`);
  console.error('usage: node ort_optimize.js MODEL OUT.onnx [--level all|extended|basic|disabled] [--dim NAME=VALUE ...]');
  process.exit(2);
}

const positional = [];
let level = 'all';
const dims = {};
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--level' || a === '--dim') {
    const v = argv[++i];
    if (v === undefined) usage(`${a} needs a value`);
    if (a === '--level') {
      if (!['all', 'extended', 'basic', 'disabled'].includes(v)) usage(`bad level '${v}'`);
      level = v;
    } else {
      const m = /^(.+)=(\d+)$/.exec(v);
      if (!m) usage(`bad --dim '${v}', want NAME=VALUE`);
      dims[m[1]] = Number(m[2]);
    }
  } else if (a === '-h' || a === '--help') {
    usage();
  } else if (a.startsWith('--')) {
    usage(`unknown option ${a}`);
  } else {
    positional.push(a);
  }
}
if (positional.length !== 2) usage();
const [model, out] = positional;

const ort = require('onnxruntime-node');
ort.env.logLevel = 'error';

(async () => {
  const t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    graphOptimizationLevel: level,
    optimizedModelFilePath: out,
    freeDimensionOverrides: dims,
  });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  await session.release();
  console.log(`session_create_s=${seconds.toFixed(4)}`);
})().catch((e) => {
  console.error(`ort_optimize.js: ${e && e.message ? e.message : e}`);
  process.exit(1);
});
