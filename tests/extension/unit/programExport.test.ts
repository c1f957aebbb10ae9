// Pins which candidate "Show generated CUDA" and "Export optimized program" take for a model, and
// what the export writes: the program files and the model with the candidate's edit, or the one-file
// KernelBench form through the harness; the report's links to both commands.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JobStore } from '../../../extension/src/model/jobStore';
import {
  candidateDir, commandUri, cudaFile, exportEntries, harnessDirCandidates, kernelbenchExportProcess, parseCandidateRef, parseExportForm,
  modelOfProgramCuda, programLinks,
} from '../../../extension/src/model/programExport';
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

test('the KernelBench form: the harness exports the candidate\'s own folder into kernelbench.py', () => {
  const c = withProgram('c1', 'verified').candidate;
  assert.equal(candidateDir(c), '/jobs/j1/candidates/c1');
  assert.equal(candidateDir({ ...c, id: 'c9' }), undefined, 'the folder must be the candidate\'s own');
  assert.equal(candidateDir(candidate('c0', 'unverified').candidate), undefined);
  const p = kernelbenchExportProcess('/venv/bin/python', '/ext/harness', '/jobs/j1/candidates/c1', '/out/kernelbench.py', { PYTHONPATH: '/mine', X: undefined });
  assert.equal(p.command, '/venv/bin/python');
  assert.deepEqual(p.args, ['-m', 'stitchcuda_harness', 'export', '--candidate', '/jobs/j1/candidates/c1', '--out', '/out/kernelbench.py']);
  assert.equal(p.env.PYTHONPATH, '/ext/harness:/mine');
  assert.ok(!('X' in p.env));
  assert.equal(parseExportForm('kernelbench'), 'kernelbench');
  assert.equal(parseExportForm('zip'), undefined);
});

test('the harness is looked for in the extension, then above the host binary', () => {
  assert.deepEqual(harnessDirCandidates('/repo/build/bin/stitchcuda', undefined), ['/repo/build/bin/harness', '/repo/build/harness', '/repo/harness', '/harness']);
  assert.deepEqual(harnessDirCandidates('/ext/bin/linux-x64/stitchcuda', '/ext')[0], '/ext/harness');
  assert.deepEqual(harnessDirCandidates('stitchcuda', undefined), []);
});

test('the report links to Show generated CUDA and Export optimized program with the candidate as argument', () => {
  const c = withProgram('c1', 'verified').candidate;
  const links = programLinks('20261125-1', c);
  const uris = [...links.matchAll(/\]\((command:[^ )]+)/g)].map((m) => m[1]);
  assert.equal(uris.length, 2);
  assert.ok(uris[0].startsWith('command:stitchcuda.showGeneratedCuda?'));
  assert.ok(uris[1].startsWith('command:stitchcuda.exportProgram?'));
  for (const u of uris) {
    const args = JSON.parse(decodeURIComponent(u.slice(u.indexOf('?') + 1)));
    assert.deepEqual(args, [{ jobId: '20261125-1', candidateId: 'c1' }]);
    assert.deepEqual(parseCandidateRef(args[0]), { jobId: '20261125-1', candidateId: 'c1' });
  }
  assert.equal(programLinks('j1', candidate('c0', 'unverified').candidate), '', 'no program, no links');
  assert.ok(!commandUri('x', [{ a: "(')" }]).includes('('), 'a parenthesis would end the Markdown link');
  assert.equal(parseCandidateRef({ jobId: 'j1' }), undefined);
  assert.equal(parseCandidateRef('file:///m.py'), undefined);
});

test("a program's .cu optimizes its model again; another .cu has no model to verify against", () => {
  const files = new Set(['/w/net.py', '/w/stitchcuda_kernels/net.cu', '/w/other/stitchcuda_kernels/gone.cu']);
  const exists = (p: string) => files.has(p);
  assert.equal(modelOfProgramCuda('/w/stitchcuda_kernels/net.cu', 'stitchcuda_kernels', exists), '/w/net.py');
  assert.equal(modelOfProgramCuda('/w/other/stitchcuda_kernels/gone.cu', 'stitchcuda_kernels', exists), undefined);
  assert.equal(modelOfProgramCuda('/w/stitchcuda_kernels/net.cu', 'kernels', exists), undefined);
  assert.equal(modelOfProgramCuda('/w/net.cu', 'stitchcuda_kernels', exists), undefined);
});
