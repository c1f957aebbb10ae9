// Pins the host launch and the optimize request built from settings: bundled binary
// lookup, the API key only in the environment, LLM fields only for LLM brains.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { API_KEY_ENV, hostLaunch, optimizeParams, readSettings, resolveHost } from '../../../extension/src/model/settings';

const defaults = (over: Record<string, unknown> = {}) => readSettings((k) => ({
  hostPath: '', pythonPath: '', brain: 'builtin', baseUrl: '', model: '', 'budget.iterations': 8, 'budget.wallSeconds': 900,
  'tolerance.atol': 1e-4, 'tolerance.rtol': 1e-4, gpu: null, ...over,
} as Record<string, unknown>)[k]);

test('host: the setting wins, then the bundled binary, then PATH', () => {
  const exists = (p: string) => p === '/ext/bin/linux-x64/stitchcuda';
  assert.deepEqual(resolveHost(defaults({ hostPath: '/opt/sc' }), '/ext', 'linux', 'x64', exists), { command: '/opt/sc', source: 'setting' });
  assert.equal(resolveHost(defaults(), '/ext', 'linux', 'x64', exists).source, 'bundled');
  assert.deepEqual(resolveHost(defaults(), '/ext', 'linux', 'arm64', exists), { command: 'stitchcuda', source: 'path' });
});

test('the API key goes only into the environment, and an inherited one is dropped', () => {
  const loc = resolveHost(defaults(), '/ext', 'linux', 'x64', () => true);
  const l = hostLaunch(loc, defaults({ pythonPath: '/usr/bin/python3' }), { PATH: '/bin', [API_KEY_ENV]: 'old' }, 'sk-secret');
  assert.deepEqual(l.args, ['serve']);
  assert.equal(l.env[API_KEY_ENV], 'sk-secret');
  assert.equal(l.env.STITCHCUDA_PYTHON, '/usr/bin/python3');
  assert.deepEqual(l.initializationOptions, { python: '/usr/bin/python3', harnessDir: '/ext/harness' });
  assert.ok(!JSON.stringify(l.initializationOptions).includes('sk-secret'));
  assert.equal(hostLaunch(loc, defaults(), { [API_KEY_ENV]: 'old' }, undefined).env[API_KEY_ENV], undefined);
});

test('optimize params: builtin brain sends no LLM fields; budget, tolerance and gpu pass through', () => {
  const p = optimizeParams('file:///m.py', defaults({ model: 'gpt', baseUrl: 'http://x', gpu: 1 }), 'tok');
  assert.deepEqual(p, {
    textDocument: { uri: 'file:///m.py' }, brain: 'builtin', budget: { iterations: 8, wallSeconds: 900 },
    tolerance: { atol: 1e-4, rtol: 1e-4 }, gpu: 1, workDoneToken: 'tok',
  });
  const q = optimizeParams('file:///m.py', defaults({ brain: 'openai', model: 'qwen', baseUrl: 'http://localhost:8000/v1' }));
  assert.equal(q.model, 'qwen');
  assert.equal(q.baseUrl, 'http://localhost:8000/v1');
  assert.equal(q.gpu, undefined);
});

test('allowPrecision: only the named precisions, once each, and sent only when set', () => {
  const s = defaults({ allowPrecision: ['tf32', 'fp8', 'tf32', 3] });
  assert.deepEqual(s.allowPrecision, ['tf32']);
  assert.deepEqual(optimizeParams('file:///m.py', s).allowPrecision, ['tf32']);
  assert.equal(optimizeParams('file:///m.py', defaults()).allowPrecision, undefined);
  assert.deepEqual(defaults({ allowPrecision: 'tf32' }).allowPrecision, []);
});

test('precision: eager by default and not sent; fp32 is sent; anything else is eager', () => {
  assert.equal(defaults().precision, 'eager');
  assert.equal(optimizeParams('file:///m.py', defaults()).precision, undefined);
  assert.equal(optimizeParams('file:///m.py', defaults({ precision: 'fp32' })).precision, 'fp32');
  assert.equal(defaults({ precision: 'tf32' }).precision, 'eager');
});

test('unknown brains and bad numbers fall back to safe values', () => {
  const s = defaults({ brain: 'gpt5', 'budget.iterations': 'many', gpu: -1 });
  assert.equal(s.brain, 'builtin');
  assert.equal(s.budgetIterations, undefined);
  assert.equal(s.gpu, null);
});

test('kernels folder: sent only when not the default, and only as a Python package name', () => {
  assert.equal(optimizeParams('file:///m.py', defaults()).kernelsFolder, undefined);
  assert.equal(optimizeParams('file:///m.py', defaults({ kernelsFolder: 'fast_ops' })).kernelsFolder, 'fast_ops');
  assert.equal(defaults({ kernelsFolder: 'my-kernels' }).kernelsFolder, 'stitchcuda_kernels');
  assert.equal(defaults({ kernelsFolder: '../x' }).kernelsFolder, 'stitchcuda_kernels');
});
