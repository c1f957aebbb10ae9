// Drives the real host binary with vscode-jsonrpc, an independent JSON-RPC implementation
// (the one VS Code's language client is built on), to check that we speak the protocol as
// others understand it: lifecycle, hover on an open document, a long-running request
// cancelled midway, a progress sequence, and exits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as rpc from 'vscode-jsonrpc/node.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const binary = process.env.STITCHCUDA_BIN ?? join(root, 'build', 'bin', 'stitchcuda');
const fakeHarness = join(root, 'tests', 'fixtures', 'fake_harness');
const recordedJob = join(root, 'tests', 'transcripts', 'fixtures', 'recorded-job.jsonl');

// Every host a test starts is killed when the test ends, pass or fail.
const started = new Set();
test.afterEach(() => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  started.clear();
});

function startHost(env = {}) {
  const jobsDir = mkdtempSync(join(tmpdir(), 'stitch-node-'));
  const child = spawn(binary, ['serve', '--jobs-dir', jobsDir, '--log-level', 'warning'], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  started.add(child);
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const connection = rpc.createMessageConnection(
    new rpc.StreamMessageReader(child.stdout),
    new rpc.StreamMessageWriter(child.stdin),
  );
  connection.listen();
  return { child, connection, exited, jobsDir };
}

function waitFor(register, predicate = () => true, ms = 15000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timed out waiting for a message')), ms);
    register((value) => {
      if (predicate(value)) {
        clearTimeout(timer);
        resolve(value);
      }
    });
  });
}

const capabilities = {
  window: { workDoneProgress: true },
  workspace: { applyEdit: true, workspaceEdit: { documentChanges: true }, codeLens: { refreshSupport: true } },
};

test('lifecycle, hover, cancelled long request, progress, shutdown and exit', async () => {
  const host = startHost({ STITCH_FAKE_HARNESS_HANG: 'hello' });
  const { connection } = host;
  // vscode-jsonrpc routes $/progress by token, as VS Code's client does.
  const progress = [];
  const progressSeen = [];
  connection.onProgress(new rpc.ProgressType(), 'tok-1', (value) => {
    progress.push(value);
    progressSeen.forEach((f) => f(value));
  });
  const notifications = [];
  connection.onNotification((method, params) => notifications.push({ method, params }));
  connection.onRequest('workspace/codeLens/refresh', () => null);

  const init = await connection.sendRequest('initialize', {
    processId: process.pid,
    rootUri: null,
    capabilities,
    initializationOptions: { harnessDir: fakeHarness, python: 'python3' },
  });
  assert.equal(init.capabilities.hoverProvider, true);
  assert.equal(init.serverInfo.name, 'stitchcuda');
  await connection.sendNotification('initialized', {});

  // Hover on an open document: nothing before a job, the profile once a job is known.
  const uri = 'file:///work/examples/mlp.py';
  const text = Array.from({ length: 40 }, (_, i) => `line ${i}`).join('\n');
  await connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text } });
  const position = { line: 14, character: 2 };
  assert.equal(await connection.sendRequest('textDocument/hover', { textDocument: { uri }, position }), null);
  const logCopy = join(host.jobsDir, 'recorded.jsonl');
  copyFileSync(recordedJob, logCopy);
  const reopened = await connection.sendRequest('stitchcuda/openJobLog', { path: logCopy });
  assert.equal(reopened.jobId, 'rec-1');
  const hover = await connection.sendRequest('textDocument/hover', { textDocument: { uri }, position });
  assert.equal(hover.contents.kind, 'markdown');
  assert.match(hover.contents.value, /1\.204 ms/);
  assert.match(hover.contents.value, /memory/);

  // A job whose worker hangs in `hello` stays running: progress begins and reports.
  const job = await connection.sendRequest('stitchcuda/optimize', { textDocument: { uri }, workDoneToken: 'tok-1' });
  assert.match(job.jobId, /^\d{8}-\d{6}-[0-9a-f]{4}$/);
  const progressReached = (kind) =>
    progress.some((v) => v.kind === kind) ? Promise.resolve() : waitFor((f) => progressSeen.push(f), (v) => v.kind === kind);
  await progressReached('report');

  // A long-running request (waitJob) cancelled midway is answered with -32800.
  const source = new rpc.CancellationTokenSource();
  const waiting = connection.sendRequest('stitchcuda/waitJob', { jobId: job.jobId }, source.token);
  setTimeout(() => source.cancel(), 200);
  await assert.rejects(waiting, (e) => e instanceof rpc.ResponseError && e.code === -32800);
  const listed = await connection.sendRequest('stitchcuda/listJobs', {});
  assert.equal(listed.jobs.find((j) => j.jobId === job.jobId).state, 'running');

  // Cancelling the job ends it, and its progress, with state "cancelled".
  const finished = waitFor((f) => connection.onNotification('stitchcuda/jobFinished', f), (p) => p.jobId === job.jobId);
  assert.deepEqual(await connection.sendRequest('stitchcuda/cancelJob', { jobId: job.jobId }), { cancelled: true });
  assert.equal((await finished).state, 'cancelled');
  // The end follows the jobFinished notification on the same ordered stream.
  await progressReached('end');
  const kinds = progress.map((v) => v.kind);
  assert.equal(kinds[0], 'begin');
  assert.ok(kinds.includes('report'));
  assert.equal(kinds.at(-1), 'end');
  assert.match(progress.at(-1).message, /cancelled/);

  await connection.sendRequest('shutdown');
  await connection.sendNotification('exit');
  const { code, signal } = await host.exited;
  assert.equal(signal, null);
  assert.equal(code, 0);
  connection.dispose();
});

test('unknown method and bad params come back as ResponseErrors with LSP codes', async () => {
  const host = startHost();
  const { connection } = host;
  await assert.rejects(connection.sendRequest('textDocument/hover', {}), (e) => e.code === -32002);
  await connection.sendRequest('initialize', { processId: null, rootUri: null, capabilities: {} });
  await assert.rejects(connection.sendRequest('stitchcuda/frobnicate', {}), (e) => e.code === -32601);
  await assert.rejects(connection.sendRequest('textDocument/hover', { textDocument: {} }), (e) => e.code === -32602);
  await connection.sendRequest('shutdown');
  await connection.sendNotification('exit');
  assert.equal((await host.exited).code, 0);
  connection.dispose();
});

test('stdin closed in the middle of a message ends the host cleanly', async () => {
  const child = spawn(binary, ['serve', '--log-level', 'error'], { stdio: ['pipe', 'pipe', 'inherit'] });
  started.add(child);
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  child.stdin.write('Content-Length: 100\r\n\r\n{"jsonrpc":"2.0",');
  child.stdin.end();
  const { code, signal } = await exited;
  assert.equal(signal, null);  // no crash
  assert.equal(code, 1);       // no shutdown was received
});

test('an oversized Content-Length is refused without taking the host down', async () => {
  const child = spawn(binary, ['serve', '--log-level', 'error'], { stdio: ['pipe', 'pipe', 'inherit'] });
  started.add(child);
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  const frame = (m) => { const b = Buffer.from(JSON.stringify(m)); return `Content-Length: ${b.length}\r\n\r\n${b}`; };
  child.stdin.write('Content-Length: 1099511627776\r\n\r\n');
  child.stdin.write(frame({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { capabilities: {} } }));
  child.stdin.end();
  const { signal } = await exited;
  assert.equal(signal, null);
  assert.match(out, /"code":-32600/);
  assert.match(out, /refused/);
});
