// `stitchcuda serve-reward` (protocol/REWARD_SERVICE.md) through the real binary and real HTTP (Node's
// fetch), on the CPU: scores from the GPU suite's recorded H200 verdict of the honest elementwise chain.
// Pins: health; a score by paths and by inline sources answers `score --json`'s reward, a cheat 0; a verify
// answers the verdict; malformed JSON and bad fields are 400 saying what is wrong; paths outside the root
// are refused; a body over --max-body is 413; beyond loopback the service will not start without a token and
// answers 401 without the right one; with several GPUs each worker gets its own, from the allocation in
// CUDA_VISIBLE_DEVICES where one is set; a full queue answers 429 with Retry-After; 50 concurrent clients that
// retry their 429s all get their own answer; metrics count it all; the verl example reward posts and retries.
// Needs an interpreter with PyTorch (STITCHCUDA_PYTHON, default /usr/bin/python3, Debian's python3-torch).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const binary = process.env.STITCHCUDA_BIN ?? join(root, 'build', 'bin', 'stitchcuda');
const python = process.env.STITCHCUDA_PYTHON ?? '/usr/bin/python3';

const suite = JSON.parse(readFileSync(join(root, 'tests/harness/results/gpu_suite_2026-11-22_h200.json'), 'utf8'));
const honest = suite.honest.find((e) => e.candidate === 'honest/elementwise_chain');
const verdict = { passed: true, status: 'passed', failed_checks: [], timing: honest.timing };
const reference = 'examples/elementwise_chain.py';
const candidate = 'tests/harness/honest/elementwise_chain';

// Starts the service on a free port; resolves with its URL once it says it listens.
async function start(t, args, env = {}) {
  const child = spawn(binary, ['serve-reward', '--port', '0', '--python', python, '--log-level', 'warning',
    '--jobs-dir', mkdtempSync(join(tmpdir(), 'stitch-reward-')), '--root', root, ...args],
  { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => stop(child));
  const line = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`serve-reward exited with ${code} before listening`)));
  });
  const match = /^listening on (http:\/\/\S+)$/.exec(line);
  assert.ok(match, line);
  return { child, url: match[1].replace('0.0.0.0', '127.0.0.1') };
}

async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  return exited;
}

async function call(url, path, { body, headers = {}, method = body === undefined ? 'GET' : 'POST' } = {}) {
  const res = await fetch(url + path, {
    method, headers, body: typeof body === 'string' || body === undefined ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(120_000),
  });
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  return { status: res.status, headers: res.headers, text, json: type.startsWith('application/json') ? JSON.parse(text) : null };
}

// Posts until the answer is not a 429, waiting what Retry-After says each time.
async function callRetrying(url, path, body) {
  let refused = 0;
  for (;;) {
    const r = await call(url, path, { body });
    if (r.status !== 429) return { ...r, refused };
    refused += 1;
    const seconds = Number(r.headers.get('retry-after'));
    assert.ok(Number.isInteger(seconds) && seconds >= 1, `Retry-After ${r.headers.get('retry-after')}`);
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000 * (1 + 0.5 * Math.random())));
  }
}

test('serve-reward scores and verifies, and refuses bad requests with what is wrong', async (t) => {
  const { url, child } = await start(t, ['--jobs', '2', '--max-body', '65536']);

  const health = await call(url, '/v1/health');
  assert.equal(health.status, 200);
  assert.equal(health.json.status, 'ok');
  assert.equal(health.json.workers, 2);

  const scored = await call(url, '/v1/score', { body: { reference, candidate, verdict, id: 'honest' } });
  assert.equal(scored.status, 200, scored.text);
  assert.equal(scored.json.schema, 'stitchcuda.score/1');
  assert.equal(scored.json.verdictSource, 'recorded');
  assert.equal(scored.json.id, 'honest');
  assert.ok(scored.json.reward > 0.5, JSON.stringify(scored.json.rule));
  assert.equal(scored.json.rubric.anti_hacking.score, 1);

  // The same candidate as text, the way a trainer on another machine has it.
  const inline = await call(url, '/v1/score', { body: {
    referenceSource: readFileSync(join(root, reference), 'utf8'),
    candidateSource: readFileSync(join(root, candidate, 'model_new.py'), 'utf8'),
    candidateCuda: readFileSync(join(root, candidate, 'candidate.cu'), 'utf8'), verdict } });
  assert.equal(inline.status, 200, inline.text);
  assert.equal(inline.json.reward, scored.json.reward);

  const cheat = await call(url, '/v1/score', {
    body: { reference, candidate: 'tests/harness/adversarial/side_stream_cuda.py', verdict } });
  assert.equal(cheat.status, 200, cheat.text);
  assert.equal(cheat.json.reward, 0);
  assert.equal(cheat.json.rubric.anti_hacking.checks.side_stream, 'failed');

  // Without a GPU the verifier says so in its verdict: an answer, not an error.
  const verified = await call(url, '/v1/verify', {
    body: { reference: 'tests/harness/fixtures/small_elementwise.py', candidate, timing: false } });
  assert.equal(verified.status, 200, verified.text);
  assert.equal(verified.json.status, 'needs_gpu');

  const refusals = [
    [{ body: '{"reference": ' }, 400, 'invalid_json', /not JSON/],
    [{ body: '[1, 2]' }, 400, 'invalid_request', /JSON object/],
    [{ body: { reference } }, 400, 'invalid_request', /candidate/],
    [{ body: { reference, candidate, weights: 3 } }, 400, 'invalid_request', /weights/],
    [{ body: { reference: '/etc/passwd', candidate } }, 400, 'invalid_request', /outside the service's root/],
    [{ body: { reference: '../../etc/passwd', candidate } }, 400, 'invalid_request', /outside the service's root|no file/],
    [{ body: { reference, referenceSource: 'x', candidate } }, 400, 'invalid_request', /not both/],
    [{ body: { reference, candidate, pad: 'x'.repeat(70_000) } }, 413, 'body_too_large', /65536 bytes/],
  ];
  for (const [request, status, code, message] of refusals) {
    const r = await call(url, '/v1/score', request);
    assert.equal(r.status, status, r.text);
    assert.equal(r.json.error.code, code, r.text);
    assert.match(r.json.error.message, message);
  }
  const unknown = await call(url, '/v1/verify', { body: { reference, candidate, trails: 3 } });
  assert.equal(unknown.status, 400);
  assert.match(unknown.json.error.message, /unknown field 'trails'/);
  const missing = await call(url, '/v1/scores', { body: {} });
  assert.equal(missing.status, 404);
  assert.match(missing.json.error.message, /POST \/v1\/score/);

  const metrics = await call(url, '/v1/metrics');
  assert.equal(metrics.status, 200);
  assert.equal(metrics.json.requestsServed, 4);
  assert.equal(metrics.json.answers.score['400'], 7);
  assert.equal(metrics.json.answers.score['413'], 1);
  assert.ok(metrics.json.latencySeconds.p95 >= metrics.json.latencySeconds.p50 && metrics.json.latencySeconds.p50 > 0);
  const text = await call(url, '/v1/metrics', { headers: { Accept: 'text/plain' } });
  assert.match(text.text, /^stitchcuda_reward_queue_depth 0$/m);
  assert.match(text.text, /^stitchcuda_reward_responses_total\{endpoint="score",status="200"\} 3$/m);

  assert.equal(await stop(child), 128 + 15);
});

test('beyond loopback serve-reward needs a token and refuses requests without it', async (t) => {
  const refused = spawnSync(binary, ['serve-reward', '--port', '0', '--host', '0.0.0.0'], { encoding: 'utf8' });
  assert.equal(refused.status, 2);
  assert.match(refused.stderr, /--token-env/);
  const unset = spawnSync(binary, ['serve-reward', '--port', '0', '--host', '0.0.0.0', '--token-env', 'STITCH_NO_SUCH_VAR',
    '--python', python], { encoding: 'utf8', env: { ...process.env, STITCH_NO_SUCH_VAR: '' } });
  assert.equal(unset.status, 2);
  assert.match(unset.stderr, /STITCH_NO_SUCH_VAR .*unset or empty/);

  const token = 's3cret-token';
  const { url } = await start(t, ['--host', '0.0.0.0', '--token-env', 'STITCH_TEST_TOKEN'], { STITCH_TEST_TOKEN: token });
  assert.equal((await call(url, '/v1/health')).status, 200);  // for liveness probes; it says nothing else
  for (const headers of [{}, { Authorization: 'Bearer wrong-token!' }, { Authorization: `Basic ${token}` },
    { Authorization: `Bearer ${token}x` }]) {
    const r = await call(url, '/v1/score', { headers, body: { reference, candidate, verdict } });
    assert.equal(r.status, 401, JSON.stringify(headers));
    assert.equal(r.headers.get('www-authenticate'), 'Bearer');
    assert.equal(r.json.error.code, 'unauthorized');
    assert.equal((await call(url, '/v1/metrics', { headers })).status, 401);
  }
  const r = await call(url, '/v1/score', { headers: { Authorization: `Bearer ${token}` }, body: { reference, candidate, verdict } });
  assert.equal(r.status, 200, r.text);
});

test('with several GPUs each worker sees its own, taken from the allocation in CUDA_VISIBLE_DEVICES', async (t) => {
  const { url } = await start(t, ['--gpus', '2'], { CUDA_VISIBLE_DEVICES: '5,7' });
  const metrics = (await call(url, '/v1/metrics')).json;
  assert.deepEqual(metrics.workerStates.map((w) => w.gpu), [5, 7]);
  for (const visible of ['5', '', 'GPU-1234,GPU-5678']) {
    const refused = spawnSync(binary, ['serve-reward', '--port', '0', '--gpus', '2', '--python', python],
      { encoding: 'utf8', env: { ...process.env, CUDA_VISIBLE_DEVICES: visible } });
    assert.equal(refused.status, 2, refused.stderr);
    assert.match(refused.stderr, /--gpus 2 .*CUDA_VISIBLE_DEVICES=/);
  }
});

test('a full queue answers 429 with Retry-After, and every request retried gets its answer', async (t) => {
  // One worker, one waiting place: of four requests sent at once two are taken and two refused.
  const { url } = await start(t, ['--jobs', '1', '--queue', '1']);
  const first = await Promise.all([0, 1, 2, 3].map((id) =>
    call(url, '/v1/score', { body: { reference, candidate, verdict, id } })));
  const refused = first.filter((r) => r.status === 429);
  assert.equal(refused.length, 2, first.map((r) => r.status).join(','));
  for (const r of refused) {
    assert.match(r.headers.get('retry-after'), /^[1-9][0-9]*$/);
    assert.equal(r.json.error.code, 'queue_full');
  }
  assert.deepEqual(first.filter((r) => r.status === 200).length, 2);
  const again = await Promise.all(first.map((r, id) => r.status === 429
    ? callRetrying(url, '/v1/score', { reference, candidate, verdict, id }) : r));
  assert.deepEqual(again.map((r) => [r.status, r.json.id]), [[200, 0], [200, 1], [200, 2], [200, 3]]);
});

test('50 concurrent clients retrying their 429s all get their own answer', async (t) => {
  const { url } = await start(t, ['--jobs', '2', '--queue', '4']);
  const clients = Array.from({ length: 50 }, (_, id) => callRetrying(url, '/v1/score', { reference, candidate, verdict, id }));
  const answers = await Promise.all(clients);
  assert.deepEqual(answers.map((r) => r.status), Array(50).fill(200));
  assert.deepEqual(answers.map((r) => r.json.id), [...Array(50).keys()]);
  assert.ok(answers.every((r) => r.json.reward === answers[0].json.reward));
  const metrics = (await call(url, '/v1/metrics')).json;
  assert.equal(metrics.requestsServed, 50);
  assert.ok(metrics.answers.score['429'] > 0, 'the queue never filled');
  assert.equal(metrics.answers.score['429'], answers.reduce((n, r) => n + r.refused, 0));
  assert.equal(metrics.queueDepth, 0);

  // The verl example reward: the candidate taken out of a model's answer, posted, its reward a float; a batch's
  // rewards in the batch's order.
  const fence = '```';
  const solution = `Here is the kernel.\n${fence}python\n${readFileSync(join(root, candidate, 'model_new.py'), 'utf8')}${fence}\n` +
    `${fence}cuda\n${readFileSync(join(root, candidate, 'candidate.cu'), 'utf8')}${fence}\n`;
  const example = spawnSync(python, ['-c', [
    'import json, sys; sys.path.insert(0, "examples"); import verl_reward',
    'args = json.load(sys.stdin)',
    'extra = {"score": {"verdict": args["verdict"]}}',
    'batch = [args["solution"]] * 9 + [""]  # more than 2 workers and a queue of 4 take at once: some are retried',
    'print(json.dumps([verl_reward.compute_score("kernelbench", args["solution"], args["reference"], extra),',
    '                  verl_reward.compute_score("kernelbench", "no code here", args["reference"]),',
    '                  verl_reward.compute_score_batch(data_sources=["kb"] * 10, solution_strs=batch,',
    '                                                  ground_truths=[args["reference"]] * 10, extra_infos=[extra] * 10)]))'].join('\n')],
  { cwd: root, encoding: 'utf8', input: JSON.stringify({ solution, reference, verdict }),
    env: { ...process.env, STITCHCUDA_REWARD_URL: url }, timeout: 120_000 });
  assert.equal(example.status, 0, example.stderr);
  const reward = answers[0].json.reward;
  assert.deepEqual(JSON.parse(example.stdout), [reward, 0, [...Array(9).fill(reward), 0]]);
  const after = (await call(url, '/v1/metrics')).json;
  assert.equal(after.requestsServed, 50 + 1 + 9);
  assert.ok(after.answers.score['429'] > metrics.answers.score['429'], 'the example was never refused, so never retried');
});
