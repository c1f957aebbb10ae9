// Pins how job events accumulate: plans replace, candidates update in place, rejected
// candidates can be dropped, a finish ends the job, profiles are found by document.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JobStore } from '../../../extension/src/model/jobStore';
import { URI, candidate, plan, profile } from './samples';

test('events build one job and notify listeners with its id', () => {
  const s = new JobStore();
  const seen: string[] = [];
  s.onDidChange((id) => seen.push(id));
  s.plan(plan);
  s.candidate(candidate('c1', 'unverified'));
  assert.deepEqual(seen, ['j1', 'j1']);
  const j = s.get('j1')!;
  assert.equal(j.uri, URI);
  assert.equal(j.tasks.length, 2);
  assert.equal(j.state, 'running');
  assert.equal(s.running().length, 1);
});

test('a later candidate event with the same id replaces it in place', () => {
  const s = new JobStore();
  s.candidate(candidate('c1', 'unverified'));
  s.candidate(candidate('c2', 'unverified'));
  s.candidate(candidate('c1', 'verified', 1.8));
  const ids = s.get('j1')!.candidates.map((c) => `${c.id}:${c.status}`);
  assert.deepEqual(ids, ['c1:verified', 'c2:unverified']);
});

test('removeCandidate and setCandidateStatus fire only on a change', () => {
  const s = new JobStore();
  s.candidate(candidate('c1', 'unverified'));
  let n = 0;
  s.onDidChange(() => n++);
  s.removeCandidate('j1', 'nope');
  s.setCandidateStatus('j1', 'c1', 'unverified');
  assert.equal(n, 0);
  s.setCandidateStatus('j1', 'c1', 'rejected');
  s.removeCandidate('j1', 'c1');
  assert.equal(n, 2);
  assert.equal(s.get('j1')!.candidates.length, 0);
});

test('jobFinished ends the job and keeps the best candidate', () => {
  const s = new JobStore();
  s.started('j1', URI);
  s.finished({ jobId: 'j1', state: 'improved', bestCandidateId: 'c1', speedupEager: 1.8, message: 'done' });
  assert.equal(s.running().length, 0);
  assert.equal(s.get('j1')!.bestCandidateId, 'c1');
});

test('log lines set the phase and are capped', () => {
  const s = new JobStore();
  for (let i = 0; i < 2100; i++) s.log({ jobId: 'j1', level: 'info', phase: 'CODE', message: `m${i}` });
  const j = s.get('j1')!;
  assert.equal(j.phase, 'CODE');
  assert.equal(j.logs.length, 2000);
  assert.equal(j.logs[0].message, 'm100');
  s.log({ jobId: '', level: 'info', message: 'host-wide' });
  assert.equal(s.all().length, 1);
});

test('profileFor finds the newest job\'s reference profile for a document', () => {
  const s = new JobStore();
  s.profile({ ...profile, subject: 'c1', lines: [] });
  s.profile(profile);
  assert.equal(s.profileFor(URI)?.subject, 'reference');
  s.profile({ ...profile, jobId: 'j2', subject: 'reference', lines: [] });
  assert.equal(s.profileFor(URI)?.jobId, 'j2');
  assert.equal(s.profileFor('file:///other.py'), undefined);
});

test('jobs are listed newest first', () => {
  const s = new JobStore();
  s.started('a', URI);
  s.started('b', URI);
  assert.deepEqual(s.all().map((j) => j.jobId), ['b', 'a']);
});
