// Applies one LSP range replacement to a text, for the candidate's virtual "after"
// document that the Diff lens opens. Pure: no 'vscode' import.

import { Position, Range } from './protocol';

/** Offsets where each line starts; a line ends at \n (a preceding \r belongs to the ending). */
export function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
  return starts;
}

/** LSP position → offset, clamped to the text (a character past the line end means the end). */
export function offsetAt(text: string, starts: number[], pos: Position): number {
  if (pos.line < 0) return 0;
  if (pos.line >= starts.length) return text.length;
  const lineStart = starts[pos.line];
  let lineEnd = pos.line + 1 < starts.length ? starts[pos.line + 1] - 1 : text.length;
  if (lineEnd > lineStart && text.charCodeAt(lineEnd - 1) === 13 && pos.line + 1 < starts.length) lineEnd -= 1;
  return Math.min(lineStart + Math.max(0, pos.character), lineEnd);
}

export function applyRangeEdit(text: string, range: Range, newText: string): string {
  const starts = lineStarts(text);
  const a = offsetAt(text, starts, range.start);
  const b = offsetAt(text, starts, range.end);
  const [from, to] = a <= b ? [a, b] : [b, a];
  return text.slice(0, from) + newText + text.slice(to);
}
