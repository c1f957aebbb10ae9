// Pins the payload parsers: well-formed notifications parse with defaults filled, and a
// malformed one is refused with the path of the bad field.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  PayloadError, parseAcceptUnverifiedArgs, parseCandidateDiffArgs, parseCandidateParams, parseJobEvent, parseJobFinished, parseListJobsResult,
  parsePlan, parseProfile,
} from '../../../extension/src/model/protocol';
import { candidate, plan, profile } from './samples';

test('a finish says when no GPU was visible', () => {
  assert.equal(parseJobFinished({ jobId: 'j', state: 'noImprovement', message: 'm', needsGpu: true }).needsGpu, true);
  assert.equal(parseJobFinished({ jobId: 'j', state: 'improved', message: 'm' }).needsGpu, undefined);
  assert.throws(() => parseJobFinished({ jobId: 'j', state: 'noImprovement', needsGpu: 'yes' }), /jobFinished\.needsGpu/);
});

test('a plan parses and keeps every task field', () => {
  const p = parsePlan(JSON.parse(JSON.stringify(plan)));
  assert.deepEqual(JSON.parse(JSON.stringify(p)), plan);
});

test('missing optional fields get their documented defaults', () => {
  const c = parseCandidateParams({ jobId: 'j', uri: 'u', candidate: { id: 'c', range: { start: { line: 1, character: 0 }, end: { line: 2, character: 0 } }, newText: '' } });
  assert.equal(c.candidate.status, 'unverified');
  assert.deepEqual(c.candidate.failedChecks, []);
  assert.equal(c.candidate.speedupEager, undefined);
  assert.deepEqual(parsePlan({ jobId: 'j', uri: 'u', tasks: [] }).uncovered, []);
  const coverage = { operators: 9, coveredOperators: 7, timeShare: 0.5, timeBasis: 'bytes' };
  assert.deepEqual(parsePlan({ jobId: 'j', uri: 'u', tasks: [], coverage }).coverage, coverage);
});

test('a malformed payload names the bad field', () => {
  assert.throws(() => parsePlan({ jobId: 'j', uri: 'u', tasks: [{ id: 't', title: 'x', range: { start: { line: 'a', character: 0 }, end: { line: 1, character: 0 } } }] }),
    (e: unknown) => e instanceof PayloadError && /plan\.tasks\[0\]\.range\.start\.line/.test(e.message));
  assert.throws(() => parseCandidateParams({ jobId: 'j', uri: 'u', candidate: { id: 'c', range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } } } }),
    /newText/);
  assert.throws(() => parseProfile({ jobId: 'j', uri: 'u', lines: [{ line: 1, share: 'big' }] }), /lines\[0\]\.share/);
  assert.throws(() => parseJobFinished(null), PayloadError);
});

test('null optional numbers read as absent, as nlohmann writes them', () => {
  const c = parseCandidateParams({ ...candidate('c1', 'unverified'), candidate: { ...candidate('c1', 'unverified').candidate, speedupEager: null } });
  assert.equal(c.candidate.speedupEager, undefined);
});

test('parseJobEvent routes by method and ignores other methods', () => {
  assert.equal(parseJobEvent('stitchcuda/profile', profile)?.method, 'stitchcuda/profile');
  assert.equal(parseJobEvent('textDocument/publishDiagnostics', {}), undefined);
});

test('listJobs and diff arguments parse', () => {
  const jobs = parseListJobsResult({ jobs: [{ jobId: 'a', uri: 'file:///m.py', state: 'improved', logPath: '/l/log.jsonl' }] });
  assert.equal(jobs[0].logPath, '/l/log.jsonl');
  const d = parseCandidateDiffArgs({ jobId: 'j', candidateId: 'c', uri: 'file:///m.py', range: { start: { line: 0, character: 0 }, end: { line: 1, character: 0 } }, newText: 'y\n' });
  assert.equal(d.newText, 'y\n');
  assert.throws(() => parseCandidateDiffArgs({ jobId: 'j' }), /candidateId/);
});

test('a candidate keeps the program files it carries; the accept-anyway lens arguments parse', () => {
  const files = [{ path: 'stitchcuda_kernels/m.cu', source: '/jobs/j/candidates/c1/program/stitchcuda_kernels/m.cu' }];
  const p = parseCandidateParams({ jobId: 'j', uri: 'file:///m.py', candidate: { ...candidate('c1', 'unverified').candidate, files } });
  assert.deepEqual(p.candidate.files, files);
  assert.throws(() => parseCandidateParams({ jobId: 'j', uri: 'u', candidate: { ...candidate('c1', 'unverified').candidate, files: [{ path: 1 }] } }),
    /files\[0\]\.path/);
  assert.deepEqual(parseAcceptUnverifiedArgs({ jobId: 'j', candidateId: 'c1', status: 'failed', failedChecks: ['output_mismatch'] }),
    { jobId: 'j', candidateId: 'c1', title: '', status: 'failed', failedChecks: ['output_mismatch'] });
});
