// What the Diff of a candidate shows: the model with the candidate's edit and every file Accept adds
// beside it, each as a read-only document of the `stitchcuda-candidate:` scheme whose query names
// the candidate (and the file). The same query tells "Show generated CUDA" which candidate a Diff
// tab is about. Pure: no 'vscode' import; views/candidateDiff.ts opens the editors.

import { Candidate } from './protocol';
import { CandidateRef } from './programExport';

export const CANDIDATE_SCHEME = 'stitchcuda-candidate';

/** A document of the Diff: the model as the candidate edits it, or one of its program files (`file`, relative to the model's folder). */
export interface DiffDocument extends CandidateRef { file?: string }

export function diffQuery(d: DiffDocument): string {
  const q = new URLSearchParams({ job: d.jobId, candidate: d.candidateId });
  if (d.file) q.set('file', d.file);
  return q.toString();
}

export function parseDiffQuery(query: string): DiffDocument | undefined {
  const q = new URLSearchParams(query);
  const jobId = q.get('job');
  const candidateId = q.get('candidate');
  if (!jobId || !candidateId) return undefined;
  const file = q.get('file');
  return file ? { jobId, candidateId, file } : { jobId, candidateId };
}

/** One row of the multi-file Diff: where the file goes, and whether it is there already (then its current text is the left side). */
export interface DiffRow { target: string; document: DiffDocument; existsNow: boolean }

function join(folder: string, rel: string): string {
  return `${folder.replace(/\/+$/, '')}/${rel.replace(/^\/+/, '')}`;
}

/**
 * The rows of a candidate's Diff: the model first, then each file Accept writes beside it
 * (`modelPath` is the model's file path; `exists` says which targets are there already).
 */
export function diffRows(jobId: string, candidate: Candidate, modelPath: string, exists: (p: string) => boolean): DiffRow[] {
  const folder = modelPath.slice(0, Math.max(0, modelPath.lastIndexOf('/'))) || '/';
  const ref = { jobId, candidateId: candidate.id };
  return [
    { target: modelPath, document: ref, existsNow: true },
    ...(candidate.files ?? []).map((f) => {
      const target = join(folder, f.path);
      return { target, document: { ...ref, file: f.path }, existsNow: exists(target) };
    }),
  ];
}

/** The candidate shown by the first of `uris` (scheme and query) that is a Diff document. */
export function candidateOfDiff(uris: { scheme: string; query: string }[]): CandidateRef | undefined {
  for (const u of uris) {
    if (u.scheme !== CANDIDATE_SCHEME) continue;
    const d = parseDiffQuery(u.query);
    if (d) return { jobId: d.jobId, candidateId: d.candidateId };
  }
  return undefined;
}
