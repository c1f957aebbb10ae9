// Pins which candidate "Show generated CUDA" and "Export optimized program" take for a model, and
// what the export writes: the program files and the model with the candidate's edit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JobStore } from '../../../extension/src/model/jobStore';
import { cudaFile, exportEntries } from '../../../extension/src/model/programExport';
import { URI, candidate } from './samples';

const files = (id: string) => [
  { path: 'stitchcuda_kernels/__init__.py', source: `/jobs/j1/candidates/${id}/program/stitchcuda_kernels/__init__.py` },
  { path: 'stitchcuda_kernels/mlp.cu', source: `/jobs/j1/candidates/${id}/program/stitchcuda_kernels/mlp.cu` },
];
const withProgram = (id: string, status: string) => {
  const p = candidate(id, status);
  return { ...p, candidate: { ...p.candidate, files: files(id) } };
};

test('the program of a model: the accepted candidate, else the best verified, else the newest built', () => {
  const store = new JobStore();
  store.started('j1', URI);
  assert.equal(store.programFor(URI), undefined);
  store.candidate(candidate('c0', 'unverified'));  // no program (it did not build)
  store.candidate(withProgram('c1', 'verified'));
  store.candidate(withProgram('c2', 'verified'));
  store.candidate(withProgram('c3', 'failed'));
  assert.equal(store.programFor(URI)?.candidate.id, 'c2');
  store.finished({ jobId: 'j1', state: 'improved', bestCandidateId: 'c1', message: '' });
  assert.equal(store.programFor(URI)?.candidate.id, 'c1');
  store.setCandidateStatus('j1', 'c2', 'accepted');
  assert.equal(store.programFor(URI)?.candidate.id, 'c2');
  assert.equal(store.programFor('file:///other.py'), undefined);
});

test('the export writes the program files and the model with the edit applied', () => {
  const c = withProgram('c1', 'verified').candidate;
  const model = Array.from({ length: 14 }, (_, i) => `line ${i}\n`).join('');
  const entries = exportEntries(c, 'mlp.py', model);
  assert.deepEqual(entries.slice(0, 2), files('c1'));
  const edited = entries[2] as { path: string; text: string };
  assert.equal(edited.path, 'mlp.py');
  assert.equal(edited.text, model.replace('line 10\nline 11\n', 'x = fused(x)\n'));
  assert.equal(cudaFile(c)?.path, 'stitchcuda_kernels/mlp.cu');
});
