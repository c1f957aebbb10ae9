// Pins what the Diff of a candidate shows (the model's edit and every file Accept adds, each against
// what is there now) and how a Diff tab names its candidate, for "Show generated CUDA" run from it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CANDIDATE_SCHEME, candidateOfDiff, diffQuery, diffRows, parseDiffQuery } from '../../../extension/src/model/candidateDiff';
import { candidate } from './samples';

const withProgram = () => {
  const c = candidate('c1', 'unverified').candidate;
  return {
    ...c, files: [
      { path: 'stitchcuda_kernels/mlp.cu', source: '/jobs/j1/candidates/c1/program/stitchcuda_kernels/mlp.cu' },
      { path: 'stitchcuda_kernels/__init__.py', source: '/jobs/j1/candidates/c1/program/stitchcuda_kernels/__init__.py' },
    ],
  };
};

test('the Diff lists the model, then each file Accept adds beside it, saying which are there already', () => {
  const rows = diffRows('j1', withProgram(), '/work/examples/mlp.py', (p) => p.endsWith('__init__.py'));
  assert.deepEqual(rows.map((r) => [r.target, r.document.file, r.existsNow]), [
    ['/work/examples/mlp.py', undefined, true],
    ['/work/examples/stitchcuda_kernels/mlp.cu', 'stitchcuda_kernels/mlp.cu', false],
    ['/work/examples/stitchcuda_kernels/__init__.py', 'stitchcuda_kernels/__init__.py', true],
  ]);
  assert.ok(rows.every((r) => r.document.jobId === 'j1' && r.document.candidateId === 'c1'));
  assert.equal(diffRows('j1', candidate('c2', 'verified').candidate, '/w/m.py', () => false).length, 1, 'no program: the model only');
});

test('a Diff document names its candidate and file, and a Diff tab its candidate', () => {
  const d = { jobId: '2026 job&1', candidateId: 'c1', file: 'stitchcuda_kernels/mlp.cu' };
  assert.deepEqual(parseDiffQuery(diffQuery(d)), d);
  assert.deepEqual(parseDiffQuery(diffQuery({ jobId: 'j', candidateId: 'c' })), { jobId: 'j', candidateId: 'c' });
  assert.equal(parseDiffQuery('job=j'), undefined);
  const right = { scheme: CANDIDATE_SCHEME, query: diffQuery({ jobId: 'j1', candidateId: 'c3' }) };
  assert.deepEqual(candidateOfDiff([{ scheme: 'file', query: '' }, right]), { jobId: 'j1', candidateId: 'c3' });
  assert.equal(candidateOfDiff([{ scheme: 'file', query: diffQuery({ jobId: 'j1', candidateId: 'c3' }) }]), undefined);
});
