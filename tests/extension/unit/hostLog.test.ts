// The output channel shows each host line once, at its level, without a second stamp or empty
// entries (model/hostLog.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HostLogSplitter, parseHostLogLine } from '../../../extension/src/model/hostLog';

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
