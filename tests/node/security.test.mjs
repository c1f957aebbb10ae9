// The host trusts nothing it is handed (SECURITY.md): the real binary probed as an attacker's job log
// and a careless client would probe it. A crafted log's candidate may not write outside the model's
// folder nor read outside its own job folder, by `..`, an absolute path or a symlink; Reject never
// writes into a log the host does not own; /dev/zero and a FIFO are refused at once; every read has a
// cap, every message a cap on its size and its nesting, and the host answers the next request within a
// second of each refusal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, readdirSync, symlinkSync, truncateSync, rmSync }
  from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as rpc from 'vscode-jsonrpc/node.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const binary = process.env.STITCHCUDA_BIN ?? join(root, 'build', 'bin', 'stitchcuda');
const SECRET = 'SECRET-4f1c9e';

const started = new Set();
const scratches = [];
test.afterEach(() => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  started.clear();
  for (const dir of scratches.splice(0)) rmSync(dir, { recursive: true, force: true });
});

// A scratch tree: the host's jobs folder, the user's workspace with its model, a folder outside it,
// a shared folder holding someone else's job (its log and program), and a secret beside them.
function scratch() {
  const base = mkdtempSync(join(tmpdir(), 'stitch-security-'));
  scratches.push(base);
  const dirs = { base, jobs: join(base, 'jobs'), workspace: join(base, 'workspace'), outside: join(base, 'outside'),
    shared: join(base, 'shared') };
  for (const d of [dirs.jobs, dirs.workspace, dirs.outside, join(dirs.shared, 'program')]) mkdirSync(d, { recursive: true });
  writeFileSync(join(dirs.workspace, 'model.py'), 'import torch\n');
  writeFileSync(join(dirs.shared, 'program', 'model.cu'), '// the program\n');
  dirs.secret = join(base, 'secret.txt');
  writeFileSync(dirs.secret, `${SECRET}\n`);
  return dirs;
}

// Every message the host sends is kept, so a test can say that a secret never left it.
function startHost(jobsDir, capabilities) {
  const child = spawn(binary, ['serve', '--jobs-dir', jobsDir, '--log-level', 'error'], { stdio: ['pipe', 'pipe', 'ignore'] });
  started.add(child);
  const received = [];
  const edits = [];
  const probe = { applies: false };  // what the probe answers to workspace/applyEdit
  const connection = rpc.createMessageConnection(new rpc.StreamMessageReader(child.stdout),
    new rpc.StreamMessageWriter(child.stdin));
  connection.onNotification((method, params) => received.push({ method, params }));
  connection.onRequest('workspace/applyEdit', (params) => {
    edits.push(params);
    return probe.applies ? { applied: true } : { applied: false, failureReason: 'the probe applies nothing' };
  });
  connection.onRequest('workspace/codeLens/refresh', () => null);
  connection.listen();
  const initialized = connection.sendRequest('initialize', { processId: null, rootUri: null, capabilities })
    .then(() => connection.sendNotification('initialized', {}));
  return { child, connection, received, edits, probe, initialized };
}

// Two kinds of client: the edit and the program in it take different paths for each.
const plainClient = { workspace: { applyEdit: true } };
const createClient = { workspace: { applyEdit: true, workspaceEdit: { documentChanges: true, resourceOperations: ['create'] } } };

// A log of one finished job whose candidate c1 carries `files`.
function writeLog(path, jobId, modelPath, files) {
  const uri = pathToFileURL(modelPath).href;
  const range = { start: { line: 0, character: 0 }, end: { line: 1, character: 0 } };
  const candidate = { id: 'c1', title: 'crafted', range, status: 'verified', failedChecks: [], newText: 'x = 1\n',
    documentVersion: 0, files };
  const events = [
    { method: 'stitchcuda/candidate', params: { jobId, uri, candidate } },
    { method: 'stitchcuda/jobFinished', params: { jobId, state: 'improved', bestCandidateId: 'c1', message: 'done' } },
  ];
  writeFileSync(path, events.map((e) => JSON.stringify({ time: '2026-01-01T00:00:00.000Z', ...e })).join('\n') + '\n');
  return path;
}

function within(ms, promise, what) {
  let timer;
  const late = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms); });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

const accept = (connection, jobId) => connection.sendRequest('workspace/executeCommand',
  { command: 'stitchcuda.acceptCandidate', arguments: [{ jobId, candidateId: 'c1' }] });

async function refused(promise, pattern) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof rpc.ResponseError, String(e));
    assert.match(e.message, pattern);
    return true;
  });
}

function filesUnder(dir) {
  return readdirSync(dir, { recursive: true });
}

for (const [name, capabilities] of [['a plain client', plainClient], ['a documentChanges client', createClient]]) {
  test(`a crafted job log's candidate reaches nothing outside the workspace and its job folder (${name})`, async () => {
    const d = scratch();
    const host = startHost(d.jobs, capabilities);
    await host.initialized;
    const model = join(d.workspace, 'model.py');
    const program = join(d.shared, 'program', 'model.cu');
    const crafted = [
      ['climbing', [{ path: '../outside/x.txt', source: program }], /"\.\.\/outside\/x\.txt"/],
      ['absolute', [{ path: join(d.outside, 'abs.txt'), source: program }], /abs\.txt" is absolute/],
      ['secret source', [{ path: 'stitchcuda_kernels/model.cu', source: d.secret }], /secret\.txt lies outside/],
      ['relative secret source', [{ path: 'stitchcuda_kernels/model.cu', source: '../secret.txt' }], /secret\.txt lies outside/],
      ['/etc source', [{ path: 'stitchcuda_kernels/model.cu', source: '/etc/passwd' }], /\/etc\/passwd lies outside/],
    ];
    symlinkSync(d.secret, join(d.shared, 'program', 'link.cu'));
    crafted.push(['symlinked source', [{ path: 'stitchcuda_kernels/model.cu', source: join(d.shared, 'program', 'link.cu') }],
      /link\.cu lies outside .*resolves to .*secret\.txt/]);
    for (const [i, [what, files, pattern]] of crafted.entries()) {
      const log = writeLog(join(d.shared, `log-${i}.jsonl`), `crafted-${i}`, model, files);
      const { jobId } = await host.connection.sendRequest('stitchcuda/openJobLog', { path: log });
      await refused(accept(host.connection, jobId), pattern).catch((e) => { throw new Error(`${what}: ${e.message}`); });
    }
    assert.deepEqual(host.edits, [], 'no edit may carry a crafted candidate');
    assert.deepEqual(filesUnder(d.outside), []);
    assert.deepEqual(filesUnder(d.workspace), ['model.py']);
    assert.ok(!JSON.stringify(host.received).includes(SECRET));
  });
}

test('a symlinked workspace takes the program; a symlink out of it is refused', async () => {
  const d = scratch();
  const host = startHost(d.jobs, plainClient);
  await host.initialized;
  const program = join(d.shared, 'program', 'model.cu');
  // The user opened the workspace through a symlink: the program lands in the real folder.
  const linked = join(d.base, 'linked-workspace');
  symlinkSync(d.workspace, linked);
  const good = writeLog(join(d.shared, 'good.jsonl'), 'good', join(linked, 'model.py'),
    [{ path: 'stitchcuda_kernels/model.cu', source: program }]);
  await host.connection.sendRequest('stitchcuda/openJobLog', { path: good });
  host.probe.applies = true;
  assert.deepEqual(await accept(host.connection, 'good'), { applied: true });
  host.probe.applies = false;
  assert.equal(readFileSync(join(d.workspace, 'stitchcuda_kernels', 'model.cu'), 'utf8'), '// the program\n');
  assert.equal(host.edits.length, 1);
  // A folder in the workspace that is a symlink to outside it is not a way out.
  symlinkSync(d.outside, join(d.workspace, 'escape'));
  const bad = writeLog(join(d.shared, 'bad.jsonl'), 'bad', join(d.workspace, 'model.py'),
    [{ path: 'escape/model.cu', source: program }]);
  await host.connection.sendRequest('stitchcuda/openJobLog', { path: bad });
  await refused(accept(host.connection, 'bad'), /"escape\/model\.cu" leads through a symlink to .*outside/);
  assert.deepEqual(filesUnder(d.outside), []);
  assert.equal(host.edits.length, 1);
});

test('Reject of a candidate from a log opened from elsewhere leaves that file as it was', async () => {
  const d = scratch();
  const host = startHost(d.jobs, plainClient);
  await host.initialized;
  // Any file holding one parseable event is a log to openJobLog; the host must not write into it.
  const foreign = writeLog(join(d.shared, 'notes.txt'), 'foreign', join(d.workspace, 'model.py'), []);
  const before = readFileSync(foreign);
  const { jobId } = await host.connection.sendRequest('stitchcuda/openJobLog', { path: foreign });
  const rejected = await host.connection.sendRequest('workspace/executeCommand',
    { command: 'stitchcuda.rejectCandidate', arguments: [{ jobId, candidateId: 'c1' }] });
  assert.equal(rejected, null);
  const { jobs } = await host.connection.sendRequest('stitchcuda/listJobs', {});
  assert.equal(jobs.length, 1);
  assert.deepEqual(readFileSync(foreign), before);
  // The same through a symlink inside the host's own jobs folder: the file it resolves to is foreign.
  const viaLink = join(d.jobs, 'linked.jsonl');
  symlinkSync(writeLog(join(d.shared, 'other.txt'), 'linked', join(d.workspace, 'model.py'), []), viaLink);
  const beforeLinked = readFileSync(viaLink);
  await host.connection.sendRequest('stitchcuda/openJobLog', { path: viaLink });
  await host.connection.sendRequest('workspace/executeCommand',
    { command: 'stitchcuda.rejectCandidate', arguments: [{ jobId: 'linked', candidateId: 'c1' }] });
  assert.deepEqual(readFileSync(viaLink), beforeLinked);
});

for (const special of ['/dev/zero', 'a FIFO']) {
  test(`openJobLog on ${special} is refused at once and the next request is answered within 1 s`, async () => {
    const d = scratch();
    const host = startHost(d.jobs, plainClient);
    await host.initialized;
    let path = special;
    if (special === 'a FIFO') {
      path = join(d.base, 'log.fifo');
      execFileSync('mkfifo', [path]);
    }
    await within(1000, refused(host.connection.sendRequest('stitchcuda/openJobLog', { path }), /not a regular file/), path);
    await within(1000, host.connection.sendRequest('stitchcuda/listJobs', {}), `listJobs after ${path}`);
  });
}

// Each file is sparse: the host must refuse it by its size, not read it.
function bigFile(path, bytes) {
  writeFileSync(path, '');
  truncateSync(path, bytes);
  return path;
}

test('a job log over its caps is refused, the cap named, and the host answers on', async () => {
  const d = scratch();
  const host = startHost(d.jobs, plainClient);
  await host.initialized;
  const log = writeLog(join(d.shared, 'big.jsonl'), 'big', join(d.workspace, 'model.py'), []);
  truncateSync(log, 33 << 20);
  await within(1000, refused(host.connection.sendRequest('stitchcuda/openJobLog', { path: log }), /over the cap of 32 MiB/), 'big log');
  await within(1000, host.connection.sendRequest('stitchcuda/listJobs', {}), 'listJobs after the big log');
  // Small, but each line would be replayed as a notification: lines have a cap of their own.
  const line = JSON.stringify({ time: 't', method: 'stitchcuda/log', params: { jobId: 'long', level: 'info', phase: 'PLAN', message: 'm' } });
  const long = join(d.shared, 'long.jsonl');
  writeFileSync(long, `${line}\n`.repeat(10001));
  await within(1000, refused(host.connection.sendRequest('stitchcuda/openJobLog', { path: long }), /10001 lines, over the cap of 10000/), 'long log');
  await within(1000, host.connection.sendRequest('stitchcuda/listJobs', {}), 'listJobs after the long log');
});

test("a candidate's program file over its cap is refused on Accept, the cap named", async () => {
  const d = scratch();
  const host = startHost(d.jobs, plainClient);
  await host.initialized;
  const program = bigFile(join(d.shared, 'program', 'big.cu'), 5 << 20);
  const log = writeLog(join(d.shared, 'log.jsonl'), 'bigprog', join(d.workspace, 'model.py'),
    [{ path: 'stitchcuda_kernels/model.cu', source: program }]);
  await host.connection.sendRequest('stitchcuda/openJobLog', { path: log });
  await refused(accept(host.connection, 'bigprog'), /big\.cu is 5242880 bytes, over the cap of 4 MiB/);
  assert.deepEqual(host.edits, []);
  assert.deepEqual(filesUnder(d.workspace), ['model.py']);
});

test('a model file over its cap is refused by optimize, the cap named', async () => {
  const d = scratch();
  const host = startHost(d.jobs, plainClient);
  await host.initialized;
  const model = bigFile(join(d.workspace, 'big_model.py'), 5 << 20);
  await refused(host.connection.sendRequest('stitchcuda/optimize', { textDocument: { uri: pathToFileURL(model).href } }),
    /over the cap of 4 MiB/);
  assert.deepEqual(readdirSync(d.jobs), []);
});

test('a message over the cap is refused as it streams past, and the next request is answered within 1 s', async () => {
  const d = scratch();
  const host = startHost(d.jobs, plainClient);
  await host.initialized;
  const refusedMessage = new Promise((resolve) => {
    host.child.stdout.on('data', (chunk) => { if (/"code":-32600[^}]*refused/.test(String(chunk))) resolve(); });
  });
  const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', method: 'textDocument/didOpen', params: { textDocument: {
    uri: 'file:///big.py', languageId: 'python', version: 1, text: 'x'.repeat(9 << 20) } } }));
  host.child.stdin.write(`Content-Length: ${body.length}\r\n\r\n`);
  host.child.stdin.write(body);
  await within(5000, refusedMessage, 'the oversized message');
  await within(1000, host.connection.sendRequest('stitchcuda/listJobs', {}), 'listJobs after the oversized message');
});

test('a message nested a million deep is refused before it is parsed, and the host answers on', async () => {
  const d = scratch();
  const host = startHost(d.jobs, plainClient);
  await host.initialized;
  const refusedMessage = new Promise((resolve) => {
    host.child.stdout.on('data', (chunk) => { if (/"code":-32600[^}]*nested deeper than 256 levels/.test(String(chunk))) resolve(); });
  });
  const depth = 1000000;
  const body = Buffer.from(`{"jsonrpc":"2.0","method":"x/y","params":{"a":${'['.repeat(depth)}${']'.repeat(depth)}}}`);
  host.child.stdin.write(`Content-Length: ${body.length}\r\n\r\n`);
  host.child.stdin.write(body);
  await within(5000, refusedMessage, 'the deep message');
  await within(1000, host.connection.sendRequest('stitchcuda/listJobs', {}), 'listJobs after the deep message');
});
