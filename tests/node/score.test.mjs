// stitchcuda/score through the real host with vscode-jsonrpc: the rubric reward of any candidate
// from a recorded verdict (the honest elementwise chain's, recorded on an H200), a cheating source
// scored 0 with that same verdict, bad params refused as InvalidParams, and an unknown job's
// candidate refused by name. Needs an interpreter with PyTorch (STITCHCUDA_PYTHON, default
// /usr/bin/python3, Debian's python3-torch).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as rpc from 'vscode-jsonrpc/node.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const binary = process.env.STITCHCUDA_BIN ?? join(root, 'build', 'bin', 'stitchcuda');
const python = process.env.STITCHCUDA_PYTHON ?? '/usr/bin/python3';

const suite = JSON.parse(readFileSync(join(root, 'tests/harness/results/gpu_suite_2026-11-22_h200.json'), 'utf8'));
const honest = suite.honest.find((e) => e.candidate === 'honest/elementwise_chain');
const verdict = { passed: true, status: 'passed', failed_checks: [], timing: honest.timing };

test('stitchcuda/score answers the rubric, a cheat scores 0, bad params are refused', async (t) => {
  const child = spawn(binary, ['serve', '--jobs-dir', mkdtempSync(join(tmpdir(), 'stitch-score-')), '--python', python,
    '--log-level', 'warning'], { stdio: ['pipe', 'pipe', 'inherit'] });
  t.after(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL'); });
  const connection = rpc.createMessageConnection(new rpc.StreamMessageReader(child.stdout),
    new rpc.StreamMessageWriter(child.stdin));
  connection.listen();
  const init = await connection.sendRequest('initialize', { processId: null, rootUri: null, capabilities: {} });
  assert.ok(init.capabilities.experimental.stitchcuda.methods.includes('stitchcuda/score'));
  connection.sendNotification('initialized', {});

  const reference = join(root, 'examples/elementwise_chain.py');
  const scored = await connection.sendRequest('stitchcuda/score', {
    reference, candidate: join(root, 'tests/harness/honest/elementwise_chain'), verdict });
  assert.equal(scored.schema, 'stitchcuda.score/1');
  assert.equal(scored.verdictSource, 'recorded');
  assert.ok(scored.reward > 0.5, JSON.stringify(scored.rule));
  assert.equal(scored.rubric.anti_hacking.score, 1);

  const cheat = await connection.sendRequest('stitchcuda/score', {
    reference, candidate: join(root, 'tests/harness/adversarial/side_stream_cuda.py'), verdict });
  assert.equal(cheat.reward, 0);
  assert.equal(cheat.rubric.anti_hacking.checks.side_stream, 'failed');

  await assert.rejects(connection.sendRequest('stitchcuda/score', { reference }),
    (e) => e.code === -32602 && /candidate/.test(e.message));
  await assert.rejects(connection.sendRequest('stitchcuda/score', { jobId: 'no-such-job', candidateId: 'c1' }),
    (e) => e.code === -32602 && /no job no-such-job/.test(e.message));

  await connection.sendRequest('shutdown');
  connection.sendNotification('exit');
  const code = await new Promise((resolve) => child.on('exit', resolve));
  assert.equal(code, 0);
});
