// The TypeScript side against protocol/examples/ (the vectors the C++ side also tests):
// every stitchcuda/* payload parses and re-serialises to the same JSON (so no field the host
// sends is unknown here), the optimize request the extension builds has the example's
// shape, and the lens commands are the ones the extension and the host register.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  parseCandidateDiffArgs, parseJobEvent, parseListJobsResult, parseOptimizeResult,
} from '../../../extension/src/model/protocol';
import { optimizeParams, readSettings } from '../../../extension/src/model/settings';

const repo = resolve(__dirname, '../..');
const dir = join(repo, 'protocol/examples');
const load = (name: string): any => JSON.parse(readFileSync(join(dir, name), 'utf8'));
const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.json')) : [];
const plain = (v: unknown) => JSON.parse(JSON.stringify(v));

test('protocol/examples holds the stitchcuda notifications', () => {
  for (const m of ['plan', 'candidate', 'profile', 'log', 'jobFinished']) {
    assert.ok(files.includes(`stitchcuda.${m}.notification.json`), `missing stitchcuda.${m}.notification.json`);
  }
});

test('every stitchcuda/* notification example parses to exactly its JSON', () => {
  const notes = files.filter((f) => f.startsWith('stitchcuda.') && f.endsWith('.notification.json'));
  assert.ok(notes.length >= 5);
  for (const f of notes) {
    const msg = load(f);
    const event = parseJobEvent(msg.method, msg.params);
    assert.ok(event, `${f}: ${msg.method} is not a job event the extension handles`);
    assert.deepEqual(plain(event!.params), msg.params, `${f}: fields differ after parsing`);
  }
});

test('results of optimize, openJobLog and listJobs parse', () => {
  assert.equal(parseOptimizeResult(load('stitchcuda.optimize.result.json').result).jobId.length > 0, true);
  assert.equal(parseOptimizeResult(load('stitchcuda.openJobLog.result.json').result).jobId.length > 0, true);
  const listed = load('stitchcuda.listJobs.result.json').result;
  assert.deepEqual(plain({ jobs: parseListJobsResult(listed) }), listed);
});

test('the optimize request the extension builds has the example\'s shape', () => {
  const example = load('stitchcuda.optimize.request.json').params;
  const settings = readSettings((k) => ({
    brain: example.brain, 'budget.iterations': example.budget.iterations, 'budget.wallSeconds': example.budget.wallSeconds,
    'tolerance.atol': example.tolerance.atol, 'tolerance.rtol': example.tolerance.rtol, gpu: example.gpu,
    allowPrecision: example.allowPrecision,
  } as Record<string, unknown>)[k]);
  assert.deepEqual(optimizeParams(example.textDocument.uri, settings, example.workDoneToken), example);
  assert.deepEqual(Object.keys(load('stitchcuda.cancelJob.request.json').params), ['jobId']);
  assert.deepEqual(Object.keys(load('stitchcuda.openJobLog.request.json').params), ['path']);
});

test('lens commands: Diff is contributed by the extension, Accept/Reject run on the host', () => {
  const manifest = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8'));
  const contributed = new Set(manifest.contributes.commands.map((c: { command: string }) => c.command));
  const hostCommands: string[] = load('initialize.result.json').result.capabilities.executeCommandProvider.commands;
  const lenses = load('textDocument.codeLens.result.json').result as { command: { title: string; command: string; arguments: unknown[] } }[];
  assert.ok(lenses.length > 0);
  for (const lens of lenses) {
    const { command, arguments: args } = lens.command;
    if (hostCommands.includes(command)) {
      assert.ok(!contributed.has(command), `${command} runs on the host; the extension must not register it`);
    } else {
      assert.ok(contributed.has(command), `lens command ${command} is neither the host's nor contributed`);
      assert.equal(command, 'stitchcuda.showCandidateDiff');
      parseCandidateDiffArgs(args[0]);
    }
  }
  assert.ok(lenses.some((l) => /^Accept \(.*(verified|unverified)\)$/.test(l.command.title)));
});
