// Pins the words the user reads: speedups, candidate states, the status bar, the
// end-of-line profile text and the plan tree.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  candidateSummary, formatMicros, formatSpeedup, jobOutcomeNotice, profileDecorations, statusBarModel, unverifiedReason,
} from '../../../extension/src/model/format';
import { JobStore } from '../../../extension/src/model/jobStore';
import { planRoots } from '../../../extension/src/model/planTree';
import { URI, candidate, plan, profile } from './samples';

test('speedups read like 1.8×', () => {
  assert.equal(formatSpeedup(1.8), '1.8×');
  assert.equal(formatSpeedup(1.04), '1.0×');
  assert.equal(formatSpeedup(0.85), '0.85×');
  assert.equal(formatSpeedup(12.4), '12×');
  assert.equal(formatSpeedup(NaN), '?×');
  assert.equal(formatMicros(1234), '1.2 ms');
  assert.equal(formatMicros(12.34), '12.3 µs');
});

test('a candidate that is not verified says so', () => {
  assert.equal(candidateSummary(candidate('c', 'unverified', 2.0).candidate), 'unverified');
  assert.equal(candidateSummary(candidate('c', 'verified', 1.8).candidate), '1.8×, verified');
  assert.match(candidateSummary(candidate('c', 'failed').candidate), /^failed: max abs error/);
});

test('status bar: host state first, then the running job, then the last result', () => {
  const s = new JobStore();
  assert.match(statusBarModel('stopped', s.all()).text, /host stopped/);
  assert.equal(statusBarModel('running', s.all()).text, '$(zap) StitchCUDA');
  s.plan(plan);
  s.candidate(candidate('c1', 'verified', 1.8));
  const running = statusBarModel('running', s.all());
  assert.equal(running.busy, true);
  assert.match(running.text, /coding · 1 candidate$/);
  s.finished({ jobId: 'j1', state: 'improved', bestCandidateId: 'c1', message: '' });
  assert.equal(statusBarModel('running', s.all()).text, '$(check) StitchCUDA: 1.8×');
});

test('a job that had no GPU is "not measured (no GPU)", not "no improvement", in the status bar, the plan and the notification', () => {
  const s = new JobStore();
  s.plan(plan);
  s.candidate(candidate('c1', 'unverified'));
  const message = 'planned, generated and compiled a candidate; timing and verification need a GPU, and none is visible';
  s.finished({ jobId: 'j1', state: 'noImprovement', message, needsGpu: true });
  const bar = statusBarModel('running', s.all());
  assert.equal(bar.text, '$(zap) StitchCUDA: not measured (no GPU)');
  assert.equal(bar.tooltip, message);
  assert.match(planRoots(s.all())[0].description!, /· not measured \(no GPU\)$/);
  assert.equal(jobOutcomeNotice(s.get('j1')!), `StitchCUDA: not measured (no GPU): ${message}`);
  // With a GPU, a job whose candidates were not faster is what it says.
  s.finished({ jobId: 'j1', state: 'noImprovement', message: 'verified c1, but it is not faster than eager' });
  assert.equal(statusBarModel('running', s.all()).text, '$(zap) StitchCUDA: no improvement');
  assert.equal(jobOutcomeNotice(s.get('j1')!), 'StitchCUDA: verified c1, but it is not faster than eager');
});

test('an interpreter without PyTorch: one clear message naming stitchcuda.pythonPath, and a click opens that setting', () => {
  const s = new JobStore();
  s.started('j1', URI);
  s.finished({ jobId: 'j1', state: 'failed', message: "ModuleNotFoundError: No module named 'torch' [internal_error]" });
  const bar = statusBarModel('running', s.all());
  assert.equal(bar.text, '$(warning) StitchCUDA: Python has no PyTorch');
  assert.match(bar.tooltip, /stitchcuda\.pythonPath/);
  assert.doesNotMatch(bar.tooltip, /ModuleNotFoundError|internal_error|hello failed/);
  assert.deepEqual(bar.command, { command: 'workbench.action.openSettings', arguments: ['stitchcuda.pythonPath'] });
  const [job] = planRoots(s.all());
  assert.match(job.description!, /Python has no PyTorch/);
  assert.doesNotMatch(job.tooltip!, /ModuleNotFoundError/);
  // Any other failure keeps the host's words and shows the plan.
  s.finished({ jobId: 'j1', state: 'failed', message: 'mlp.py:3: SyntaxError: invalid syntax [task_import_error]' });
  assert.equal(statusBarModel('running', s.all()).text, '$(warning) StitchCUDA: failed');
  assert.deepEqual(statusBarModel('running', s.all()).command, { command: 'stitchcuda.showPlan' });
});

test('profile decorations: the hottest lines, host text first, in line order', () => {
  const d = profileDecorations(profile);
  assert.deepEqual(d.map((x) => x.line), [10, 11]);
  assert.equal(d[0].text, '600 µs · 60% · compute 71%');
  assert.equal(d[1].text, '300 µs · 30% · memory-bound');
  assert.equal(profileDecorations(profile, 1).length, 1);
  const cpu = profileDecorations({ ...profile, timeKind: 'cpu' });
  assert.equal(cpu[1].text, '300 µs CPU · 30% · memory-bound', 'CPU times say so');
});

test('plan tree: job → tasks → candidates, with operators left in PyTorch', () => {
  const s = new JobStore();
  s.plan(plan);
  s.candidate(candidate('c1', 'unverified'));
  const [job] = planRoots(s.all());
  assert.equal(job.label, 'mlp.py');
  assert.match(job.description!, /^2 tasks · running/);
  assert.deepEqual(job.children.map((c) => c.label), ['Fuse linear + GELU', 'LayerNorm kernel', 'Left in PyTorch']);
  const [cand] = job.children[0].children;
  assert.equal(cand.description, 'unverified');
  assert.equal(cand.icon, 'candidate-unverified');
  assert.equal(cand.uri, URI);
  assert.equal(job.children[0].description, 'cuBLASLt + GELU epilogue · ~35% expected');
});

test('plan tree: a partial plan says how much runs in compiled code', () => {
  const s = new JobStore();
  s.plan({ ...plan, coverage: { operators: 5, coveredOperators: 4, timeShare: 0.861, timeBasis: 'profile' } });
  const left = planRoots(s.all())[0].children.find((c) => c.label === 'Left in PyTorch')!;
  assert.equal(left.description, '4/5 ops, 86% of time compiled · aten::dropout');
  assert.match(left.tooltip!, /between the compiled segments/);
});

test('the confirmation before accepting an unverified candidate says why it is not verified', () => {
  assert.match(unverifiedReason('failed', ['output_mismatch', 'nan_or_inf']), /failed verification \(output_mismatch, nan_or_inf\)/);
  assert.match(unverifiedReason('unverified', []), /no GPU ran it/);
});
