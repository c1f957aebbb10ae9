// A failed job's error as a diagnostic on the user's file and line. The host ends a job whose
// model does not load (a syntax error, an import, __init__ or forward that raises, a non-tensor
// output) as `failed` with the harness's message prefixed by the file and line
// (PROTOCOL.md: `/…/model.py:7: invalid syntax [syntax_error]`). The file named there is the job's
// snapshot of the model (`<jobsDir>/<jobId>/model.py`), so it is mapped back to the job's document.
// Pure: no 'vscode' import.

import type { JobView } from './jobStore';

export interface JobDiagnostic {
  /** The job's document. */
  uri: string;
  /** Zero-based. */
  line: number;
  message: string;
  /** The harness's error code (`syntax_error`, `task_init_error`, …) when the message carries one. */
  code?: string;
}

export interface LocatedError { file: string; line: number; message: string; code?: string }

/** `FILE:LINE: MESSAGE [code]` → its parts; undefined when the message does not start with a file and line. */
export function parseLocatedError(text: string): LocatedError | undefined {
  const m = /^((?:[A-Za-z]:)?[^:\n]+):(\d+): ([\s\S]*?)(?: \[([a-z][a-z0-9_]*)\])?\s*$/.exec(text);
  if (!m) return undefined;
  const line = Number(m[2]);
  if (!Number.isInteger(line) || line < 1) return undefined;
  return { file: m[1], line, message: m[3], ...(m[4] ? { code: m[4] } : {}) };
}

/** The file system path of a file:// URI; undefined for other schemes. */
export function fileUriPath(uri: string): string | undefined {
  if (!uri.startsWith('file://')) return undefined;
  try {
    const path = decodeURIComponent(new URL(uri).pathname);
    return /^\/[A-Za-z]:\//.test(path) ? path.slice(1) : path;
  } catch {
    return undefined;
  }
}

const parts = (p: string): string[] => p.split(/[\\/]+/).filter(Boolean);

/**
 * Whether `file` (named in a job's error) is the job's document: the document itself, or the
 * job's snapshot of it (same name, in the folder named by the job id).
 */
export function isJobDocument(file: string, job: Pick<JobView, 'jobId' | 'uri'>): boolean {
  const doc = fileUriPath(job.uri);
  if (doc && parts(doc).join('/') === parts(file).join('/')) return true;
  const f = parts(file);
  const name = parts(doc ?? job.uri).pop();
  return f.length >= 2 && f[f.length - 1] === name && f[f.length - 2] === job.jobId;
}

/** The diagnostic of a failed job whose error names a line of its document; undefined otherwise. */
export function jobDiagnostic(job: Pick<JobView, 'jobId' | 'uri' | 'state' | 'message'>): JobDiagnostic | undefined {
  if (job.state !== 'failed' || !job.message || !job.uri) return undefined;
  const e = parseLocatedError(job.message);
  if (!e || !isJobDocument(e.file, job)) return undefined;
  return { uri: job.uri, line: e.line - 1, message: e.message, ...(e.code ? { code: e.code } : {}) };
}

/**
 * The diagnostics per document: those of its newest job (none while it runs: the user is trying
 * again; a later run that loads the model ends with none).
 */
export function diagnosticsByDocument(jobs: JobView[]): Map<string, JobDiagnostic[]> {
  const out = new Map<string, JobDiagnostic[]>();
  for (const job of [...jobs].sort((a, b) => b.startedOrder - a.startedOrder)) {
    if (!job.uri || out.has(job.uri)) continue;
    const d = jobDiagnostic(job);
    out.set(job.uri, d ? [d] : []);
  }
  return out;
}
