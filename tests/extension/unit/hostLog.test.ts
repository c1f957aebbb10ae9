// The output channel shows each host line once, at its level, without a second stamp or empty
// entries (model/hostLog.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HostLogSplitter, TracebackBlocks, parseHostLogLine } from '../../../extension/src/model/hostLog';

test('a host line loses its stamp and keeps its level', () => {
  assert.deepEqual(parseHostLogLine('W 2026-11-25T10:00:00.123Z [stitchcuda] worker restarted'),
    { level: 'warn', text: 'worker restarted' });
  assert.deepEqual(parseHostLogLine('E 2026-11-25T10:00:00Z [stitchcuda] cannot open log file'),
    { level: 'error', text: 'cannot open log file' });
});

test("the language client's own stamp goes too", () => {
  assert.deepEqual(parseHostLogLine('[Info  - 10:13:00 AM] Connection to server got closed.'),
    { level: 'info', text: 'Connection to server got closed.' });
  assert.deepEqual(parseHostLogLine('[Error - 22:13:00] Server initialization failed.'),
    { level: 'error', text: 'Server initialization failed.' });
  assert.deepEqual(parseHostLogLine('anything else'), { level: 'info', text: 'anything else' });
});

test('chunks become whole lines, with no empty entries', () => {
  const s = new HostLogSplitter();
  assert.deepEqual(s.push('I 2026-11-25T10:00:00Z [stitchcuda] first\n\nI 2026-11-25T10:00:01Z [stitch'), [
    { level: 'info', text: 'first' },
  ]);
  assert.deepEqual(s.push('cuda] second\r\n'), [{ level: 'info', text: 'second' }]);
  assert.deepEqual(s.push('\n'), []);
  assert.deepEqual(s.push('a traceback line without newline'), []);
  assert.deepEqual(s.flush(), [{ level: 'info', text: 'a traceback line without newline' }]);
  assert.deepEqual(s.flush(), []);
});

test("a worker's traceback is logged whole at the level its exception line gets", () => {
  const info = (text: string) => ({ level: 'info' as const, text });
  const blocks = new TracebackBlocks((e) => (/No module named 'torch'/.test(e) ? 'debug' : undefined));
  const traceback = ['Traceback (most recent call last):', '  File "worker.py", line 91, in hello', '    import torch'].map(info);
  assert.deepEqual(blocks.push([info('harness worker started'), ...traceback]), [info('harness worker started')]);
  assert.deepEqual(blocks.push([info("ModuleNotFoundError: No module named 'torch'"), info('job finished')]), [
    ...[...traceback, info("ModuleNotFoundError: No module named 'torch'")].map((l) => ({ level: 'debug', text: l.text })),
    info('job finished'),
  ]);
  // Any other exception keeps its lines as they came.
  const other = [...traceback.slice(0, 2), info('ValueError: width must be positive')];
  assert.deepEqual(blocks.push(other), other);
  assert.deepEqual(blocks.push(traceback.slice(0, 2)), []);
  assert.deepEqual(blocks.flush(), traceback.slice(0, 2));
});
