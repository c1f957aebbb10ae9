// The rubric hover against protocol/examples/stitchcuda.score.result.json (the host's real answer
// for the honest elementwise chain): it parses, the table shows the reward and each dimension, a
// failed guard is named with reward 0, a malformed answer is refused by field, and the hover finds
// the job's best candidate under the cursor, never a rejected one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { candidateAt, parseScoreResult, rubricMarkdown } from '../../../extension/src/model/rubric';
import { JobStore } from '../../../extension/src/model/jobStore';

const repo = resolve(__dirname, '../..');
const example = JSON.parse(readFileSync(join(repo, 'protocol/examples/stitchcuda.score.result.json'), 'utf8')).result;

test('the host\'s score parses into the hover\'s table', () => {
  const r = parseScoreResult(example);
  assert.equal(r.reward, example.reward);
  assert.equal(r.antiHacking.passed, 16);
  assert.deepEqual(r.cudaEngineering.techniques.sort(), ['fusion', 'vectorized_access']);
  const md = rubricMarkdown('c1', r);
  assert.match(md, /^\*\*StitchCUDA rubric\*\* · c1 · reward 0\.76\n/);
  assert.match(md, /\| anti-hacking \| 1 \| 16 guards passed \|/);
  assert.match(md, /\| CUDA engineering \| 0\.35 \| fusion, vectorized_access \(read from ptx\) \|/);
  assert.match(md, /\| skill compliance \| — \|/);
});

test('a failed guard is named and the reward is 0', () => {
  const cheat = structuredClone(example);
  cheat.reward = 0;
  cheat.rubric.anti_hacking.score = 0;
  cheat.rubric.anti_hacking.checks.side_stream = 'failed';
  cheat.rubric.anti_hacking.findings = [{ check: 'side_stream', message: "creates its own CUDA stream: 'cudaStreamCreate('" }];
  const md = rubricMarkdown('c2', parseScoreResult(cheat));
  assert.match(md, /reward 0 \(a guard failed: reward 0\)/);
  assert.match(md, /\| anti-hacking \| 0 \| failed: side_stream \|/);
});

test('a malformed answer is refused by field', () => {
  assert.throws(() => parseScoreResult({ ...example, schema: 'x' }), /not stitchcuda\.score\/1/);
  const noDim = structuredClone(example);
  delete noDim.rubric.operator_coverage;
  assert.throws(() => parseScoreResult(noDim), /rubric\.operator_coverage/);
});

test('the hover finds the best candidate under the cursor, never a rejected one', () => {
  const store = new JobStore();
  const uri = 'file:///w/model.py';
  const range = { start: { line: 10, character: 0 }, end: { line: 14, character: 0 } };
  const base = { taskId: 't', title: '', failedChecks: [], newText: '' };
  store.started('j1', uri);
  store.candidate({ jobId: 'j1', uri, candidate: { ...base, id: 'c1', range, status: 'verified' } });
  store.candidate({ jobId: 'j1', uri, candidate: { ...base, id: 'c2', range, status: 'failed' } });
  assert.equal(candidateAt(store.all(), uri, 12)?.candidate.id, 'c2');  // no best yet: the latest
  store.finished({ jobId: 'j1', state: 'improved', bestCandidateId: 'c1', message: '' });
  assert.equal(candidateAt(store.all(), uri, 12)?.candidate.id, 'c1');
  assert.equal(candidateAt(store.all(), uri, 20), undefined);
  assert.equal(candidateAt(store.all(), 'file:///w/other.py', 12), undefined);
  store.setCandidateStatus('j1', 'c1', 'rejected');
  store.setCandidateStatus('j1', 'c2', 'rejected');
  assert.equal(candidateAt(store.all(), uri, 12), undefined);
});
