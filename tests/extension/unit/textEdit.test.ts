// Pins the candidate's virtual "after" document: LSP ranges over \n and \r\n text,
// clamping past line ends and past the last line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyRangeEdit } from '../../../extension/src/model/textEdit';

const r = (a: number, b: number, c: number, d: number) => ({ start: { line: a, character: b }, end: { line: c, character: d } });

test('replaces whole lines', () => {
  assert.equal(applyRangeEdit('a\nb\nc\n', r(1, 0, 2, 0), 'B1\nB2\n'), 'a\nB1\nB2\nc\n');
});

test('keeps \\r\\n line endings outside the range and clamps a character past the line end', () => {
  assert.equal(applyRangeEdit('ab\r\ncd\r\n', r(0, 1, 0, 99), 'X'), 'aX\r\ncd\r\n');
});

test('a range past the end appends; a reversed range is normalised', () => {
  assert.equal(applyRangeEdit('a\n', r(5, 0, 6, 0), 'z\n'), 'a\nz\n');
  assert.equal(applyRangeEdit('abc', r(0, 2, 0, 1), 'X'), 'aXc');
});
