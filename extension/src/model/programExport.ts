// What "Export optimized program" writes: the candidate's program files and the model with the
// candidate's edit applied, side by side (the same set Accept writes and `stitchcuda optimize --out`
// writes), or the one-file KernelBench form (`kernelbench.py` with `ModelNew`), which the harness
// writes (HARNESS.md: `python -m stitchcuda_harness export`). Also the links a candidate's report
// carries to "Show generated CUDA" and "Export optimized program". Pure: no 'vscode' import;
// commands.ts reads and writes the files and runs the harness.

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

/** The two forms of the export. */
export type ExportForm = 'program' | 'kernelbench';
export const EXPORT_FORMS: readonly ExportForm[] = ['program', 'kernelbench'];
/** The file name of the KernelBench form. */
export const KERNELBENCH_FILE = 'kernelbench.py';

export function parseExportForm(v: unknown): ExportForm | undefined {
  return typeof v === 'string' && (EXPORT_FORMS as readonly string[]).includes(v) ? (v as ExportForm) : undefined;
}

/** A candidate named by its job: the argument of the report's links. */
export interface CandidateRef { jobId: string; candidateId: string }

export function parseCandidateRef(v: unknown): CandidateRef | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const o = v as Record<string, unknown>;
  return typeof o.jobId === 'string' && typeof o.candidateId === 'string' && o.jobId && o.candidateId
    ? { jobId: o.jobId, candidateId: o.candidateId } : undefined;
}

/**
 * The candidate's own folder in the job (`<jobDir>/candidates/<id>`: its ModelNew `.py` and `.cu`,
 * the fast-path candidate the KernelBench export reads), found from where the host keeps its
 * program (`<jobDir>/candidates/<id>/program/...`). Undefined when the paths do not say.
 */
export function candidateDir(candidate: Candidate): string | undefined {
  for (const f of candidate.files ?? []) {
    const m = /^(.*[\\/]candidates[\\/]([^\\/]+))[\\/]program[\\/]/.exec(f.source);
    if (m && m[2] === candidate.id) return m[1];
  }
  return undefined;
}

function parent(p: string): string {
  const i = Math.max(p.lastIndexOf('/'), p.lastIndexOf('\\'));
  return i > 0 ? p.slice(0, i) : i === 0 ? '/' : '';
}

/**
 * Folders that may hold the harness (`<dir>/stitchcuda_harness`), best first: the one bundled in
 * the extension, then `harness/` in the folders above the host binary (as the host itself looks).
 */
export function harnessDirCandidates(hostCommand: string, bundledRoot: string | undefined): string[] {
  const out: string[] = [];
  if (bundledRoot) out.push(`${bundledRoot}/harness`);
  if (/[\\/]/.test(hostCommand)) {
    for (let dir = parent(hostCommand); dir && out.length < 8; dir = parent(dir)) {
      out.push(`${dir === '/' ? '' : dir}/harness`);
      if (dir === '/' || parent(dir) === dir) break;
    }
  }
  return out;
}

export interface ProcessSpec { command: string; args: string[]; env: Record<string, string> }

/** The harness's KernelBench export of a candidate folder, run with `python`. */
export function kernelbenchExportProcess(
  python: string, harnessDir: string, candidateFolder: string, out: string, baseEnv: Record<string, string | undefined>,
): ProcessSpec {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(baseEnv)) if (v !== undefined) env[k] = v;
  env.PYTHONPATH = env.PYTHONPATH ? `${harnessDir}:${env.PYTHONPATH}` : harnessDir;
  env.PYTHONUNBUFFERED = '1';
  return { command: python, args: ['-m', 'stitchcuda_harness', 'export', '--candidate', candidateFolder, '--out', out], env };
}

/** A `command:` URI for a Markdown link, its arguments JSON-encoded. */
export function commandUri(command: string, args: unknown[]): string {
  // encodeURIComponent leaves ( ) ' as they are; a parenthesis would end the Markdown link.
  const query = encodeURIComponent(JSON.stringify(args)).replace(/[()']/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `command:${command}?${query}`;
}

/** The commands a candidate's report links to (MarkdownString.isTrusted.enabledCommands). */
export const REPORT_COMMANDS = ['stitchcuda.showGeneratedCuda', 'stitchcuda.exportProgram'] as const;

/** The report's links for a candidate with a program; empty for one without. */
export function programLinks(jobId: string, candidate: Candidate): string {
  if (!candidate.files?.length || !candidate.newText) return '';
  const ref: CandidateRef = { jobId, candidateId: candidate.id };
  return `[Show generated CUDA](${commandUri('stitchcuda.showGeneratedCuda', [ref])} "Open candidate ${candidate.id}'s .cu")`
    + ` · [Export optimized program](${commandUri('stitchcuda.exportProgram', [ref])} "Export candidate ${candidate.id}: the program folder or one KernelBench file")`;
}

/**
 * The model a program's `.cu` belongs to: Accept writes `<dir>/<kernelsFolder>/<name>.cu` beside
 * `<dir>/<name>.py`, so optimizing that `.cu` means optimizing `<name>.py` again. Any other `.cu`
 * (a kernel without its PyTorch model) has nothing to verify against: undefined.
 */
export function modelOfProgramCuda(cuPath: string, kernelsFolder: string, exists: (p: string) => boolean): string | undefined {
  const parts = cuPath.split('/');
  const file = parts.pop();
  if (!file?.endsWith('.cu') || parts.pop() !== kernelsFolder) return undefined;
  const model = [...parts, `${file.slice(0, -'.cu'.length)}.py`].join('/');
  return exists(model) ? model : undefined;
}
