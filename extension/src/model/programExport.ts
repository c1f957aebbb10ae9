// What "Export optimized program" writes: the candidate's program files and the model with the
// candidate's edit applied, side by side (the same set Accept writes and `stitchcuda optimize --out`
// writes). Pure: no 'vscode' import; commands.ts reads and writes the files.

import { Candidate } from './protocol';
import { applyRangeEdit } from './textEdit';

export type ExportEntry = { path: string; source: string } | { path: string; text: string };

/** The files to write under the chosen folder; paths are relative to it. */
export function exportEntries(candidate: Candidate, modelName: string, modelText: string): ExportEntry[] {
  return [
    ...(candidate.files ?? []).map((f) => ({ path: f.path, source: f.source })),
    { path: modelName, text: applyRangeEdit(modelText, candidate.range, candidate.newText) },
  ];
}

/** The program's CUDA source among its files. */
export function cudaFile(candidate: Candidate): { path: string; source: string } | undefined {
  return candidate.files?.find((f) => f.path.endsWith('.cu'));
}
