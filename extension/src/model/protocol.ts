// The stitchcuda/* payloads as TypeScript types, with parsers that check them at the edge
// (mirrors protocol/StitchTypes.h; tests run these parsers over protocol/examples/).
// Pure: no 'vscode' import, so node --test can load it.

export interface Position { line: number; character: number }
export interface Range { start: Position; end: Position }

export type TaskStatus = 'pending' | 'active' | 'done' | 'skipped' | string;
export type CandidateStatus = 'unverified' | 'verified' | 'failed' | 'accepted' | 'rejected' | string;
export type JobState = 'running' | 'improved' | 'noImprovement' | 'failed' | 'cancelled' | string;

export interface PlanTask {
  id: string;
  title: string;
  range: Range;
  operators: string[];
  technique: string;
  expectedGainPct?: number;
  status: TaskStatus;
}

/** How much of the forward runs in compiled code; the rest stays in PyTorch between the segments. */
export interface PlanCoverage { operators: number; coveredOperators: number; timeShare: number; timeBasis: string }

export interface PlanParams { jobId: string; uri: string; tasks: PlanTask[]; uncovered: string[]; coverage?: PlanCoverage }

export interface Candidate {
  id: string;
  taskId: string;
  title: string;
  range: Range;
  status: CandidateStatus;
  speedupEager?: number;
  speedupCompile?: number;
  failedChecks: string[];
  newText: string;
  documentVersion?: number;
  /** The program newText imports, written beside the model on accept (paths relative to its folder). */
  files?: { path: string; source: string }[];
}

export interface CandidateParams { jobId: string; uri: string; candidate: Candidate }

export interface ProfileLine {
  line: number; // zero-based
  gpuTimeUs: number;
  share: number; // 0..1 of the whole forward
  bound: string;
  achievedPct?: number;
  topStall?: string;
  kernels: string[];
  inlineText: string;
}

export interface ProfileParams {
  jobId: string;
  uri: string;
  subject: string;
  /** "gpu", or "cpu" when no GPU was visible and the times are CPU times. */
  timeKind?: string;
  totalGpuTimeUs?: number;
  lines: ProfileLine[];
}

export interface LogParams { jobId: string; level: string; phase?: string; message: string }

export interface JobFinishedParams {
  jobId: string;
  state: JobState;
  bestCandidateId?: string;
  speedupEager?: number;
  message: string;
  /** No GPU was visible: nothing could be verified or timed. */
  needsGpu?: boolean;
}

/** Lower precisions a job may allow (PROTOCOL.md, stitchcuda/optimize). */
export const PRECISIONS = ['tf32', 'fp16', 'bf16'] as const;
export type Precision = (typeof PRECISIONS)[number];

/** The precision of the built-in brain's library calls (PROTOCOL.md, stitchcuda/optimize's `precision`):
 *  eager's for each operator (TF32 convolutions while cudnn.allow_tf32 is on), or exact fp32 everywhere. */
export const PRECISION_MODES = ['eager', 'fp32'] as const;
export type PrecisionMode = (typeof PRECISION_MODES)[number];

export interface OptimizeParams {
  textDocument: { uri: string };
  brain: 'builtin' | 'openai' | 'anthropic';
  model?: string;
  baseUrl?: string;
  budget?: { iterations?: number; wallSeconds?: number };
  tolerance?: { atol: number; rtol: number };
  allowPrecision?: Precision[];
  precision?: PrecisionMode;
  gpu?: number;
  /** The folder beside the model an accepted program goes to (a Python package name). */
  kernelsFolder?: string;
  workDoneToken?: string | number;
}

export interface OptimizeResult { jobId: string }

export interface JobSummary {
  jobId: string;
  uri: string;
  state: JobState;
  phase?: string;
  startedAt?: string;
  bestCandidateId?: string;
  logPath?: string;
}

/** Arguments of the client-side stitchcuda.showCandidateDiff command (sent on the Diff lens). */
export interface CandidateDiffArgs {
  jobId: string;
  candidateId: string;
  uri: string;
  range: Range;
  newText: string;
}

export const Methods = {
  optimize: 'stitchcuda/optimize',
  cancelJob: 'stitchcuda/cancelJob',
  listJobs: 'stitchcuda/listJobs',
  openJobLog: 'stitchcuda/openJobLog',
  plan: 'stitchcuda/plan',
  candidate: 'stitchcuda/candidate',
  profile: 'stitchcuda/profile',
  log: 'stitchcuda/log',
  jobFinished: 'stitchcuda/jobFinished',
} as const;

/** Thrown when a payload does not have the documented shape; says which field. */
export class PayloadError extends Error {}

type Obj = Record<string, unknown>;

function obj(v: unknown, where: string): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new PayloadError(`${where}: expected an object`);
  return v as Obj;
}
function str(o: Obj, key: string, where: string, fallback?: string): string {
  const v = o[key];
  if (v === undefined && fallback !== undefined) return fallback;
  if (typeof v !== 'string') throw new PayloadError(`${where}.${key}: expected a string`);
  return v;
}
function num(o: Obj, key: string, where: string, fallback?: number): number {
  const v = o[key];
  if (v === undefined && fallback !== undefined) return fallback;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new PayloadError(`${where}.${key}: expected a number`);
  return v;
}
function optNum(o: Obj, key: string, where: string): number | undefined {
  return o[key] === undefined || o[key] === null ? undefined : num(o, key, where);
}
function optStr(o: Obj, key: string, where: string): string | undefined {
  return o[key] === undefined || o[key] === null ? undefined : str(o, key, where);
}
function optBool(o: Obj, key: string, where: string): boolean | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw new PayloadError(`${where}.${key}: expected a boolean`);
  return v;
}
function strArray(o: Obj, key: string, where: string): string[] {
  const v = o[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw new PayloadError(`${where}.${key}: expected an array of strings`);
  return v as string[];
}
function array(o: Obj, key: string, where: string): unknown[] {
  const v = o[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new PayloadError(`${where}.${key}: expected an array`);
  return v;
}

export function parsePosition(v: unknown, where: string): Position {
  const o = obj(v, where);
  return { line: num(o, 'line', where), character: num(o, 'character', where) };
}

export function parseRange(v: unknown, where: string): Range {
  const o = obj(v, where);
  return { start: parsePosition(o.start, `${where}.start`), end: parsePosition(o.end, `${where}.end`) };
}

export function parsePlanTask(v: unknown, where = 'task'): PlanTask {
  const o = obj(v, where);
  return {
    id: str(o, 'id', where),
    title: str(o, 'title', where),
    range: parseRange(o.range, `${where}.range`),
    operators: strArray(o, 'operators', where),
    technique: str(o, 'technique', where, ''),
    expectedGainPct: optNum(o, 'expectedGainPct', where),
    status: str(o, 'status', where, 'pending'),
  };
}

export function parsePlan(v: unknown): PlanParams {
  const o = obj(v, 'plan');
  return {
    jobId: str(o, 'jobId', 'plan'),
    uri: str(o, 'uri', 'plan'),
    tasks: array(o, 'tasks', 'plan').map((t, i) => parsePlanTask(t, `plan.tasks[${i}]`)),
    uncovered: strArray(o, 'uncovered', 'plan'),
    coverage: o.coverage === undefined ? undefined : parseCoverage(o.coverage),
  };
}

function parseCoverage(v: unknown): PlanCoverage {
  const o = obj(v, 'plan.coverage');
  return {
    operators: num(o, 'operators', 'plan.coverage'),
    coveredOperators: num(o, 'coveredOperators', 'plan.coverage'),
    timeShare: optNum(o, 'timeShare', 'plan.coverage') ?? 0,
    timeBasis: optStr(o, 'timeBasis', 'plan.coverage') ?? '',
  };
}

export function parseCandidate(v: unknown, where = 'candidate'): Candidate {
  const o = obj(v, where);
  const documentVersion = optNum(o, 'documentVersion', where);
  return {
    id: str(o, 'id', where),
    taskId: str(o, 'taskId', where, ''),
    title: str(o, 'title', where, ''),
    range: parseRange(o.range, `${where}.range`),
    status: str(o, 'status', where, 'unverified'),
    speedupEager: optNum(o, 'speedupEager', where),
    speedupCompile: optNum(o, 'speedupCompile', where),
    failedChecks: strArray(o, 'failedChecks', where),
    newText: str(o, 'newText', where),
    ...(documentVersion === undefined ? {} : { documentVersion }),
    ...(Array.isArray(o.files) ? {
      files: o.files.map((f, i) => {
        const fo = obj(f, `${where}.files[${i}]`);
        return { path: str(fo, 'path', `${where}.files[${i}]`), source: str(fo, 'source', `${where}.files[${i}]`) };
      }),
    } : {}),
  };
}

export function parseCandidateParams(v: unknown): CandidateParams {
  const o = obj(v, 'candidate params');
  return {
    jobId: str(o, 'jobId', 'candidate params'),
    uri: str(o, 'uri', 'candidate params'),
    candidate: parseCandidate(o.candidate, 'candidate params.candidate'),
  };
}

export function parseProfileLine(v: unknown, where = 'line'): ProfileLine {
  const o = obj(v, where);
  return {
    line: num(o, 'line', where),
    gpuTimeUs: num(o, 'gpuTimeUs', where, 0),
    share: num(o, 'share', where, 0),
    bound: str(o, 'bound', where, ''),
    achievedPct: optNum(o, 'achievedPct', where),
    topStall: optStr(o, 'topStall', where),
    kernels: strArray(o, 'kernels', where),
    inlineText: str(o, 'inlineText', where, ''),
  };
}

export function parseProfile(v: unknown): ProfileParams {
  const o = obj(v, 'profile');
  return {
    jobId: str(o, 'jobId', 'profile'),
    uri: str(o, 'uri', 'profile'),
    subject: str(o, 'subject', 'profile', 'reference'),
    timeKind: optStr(o, 'timeKind', 'profile'),
    totalGpuTimeUs: optNum(o, 'totalGpuTimeUs', 'profile'),
    lines: array(o, 'lines', 'profile').map((l, i) => parseProfileLine(l, `profile.lines[${i}]`)),
  };
}

export function parseLog(v: unknown): LogParams {
  const o = obj(v, 'log');
  return {
    jobId: str(o, 'jobId', 'log', ''),
    level: str(o, 'level', 'log', 'info'),
    phase: optStr(o, 'phase', 'log'),
    message: str(o, 'message', 'log'),
  };
}

export function parseJobFinished(v: unknown): JobFinishedParams {
  const o = obj(v, 'jobFinished');
  return {
    jobId: str(o, 'jobId', 'jobFinished'),
    state: str(o, 'state', 'jobFinished'),
    bestCandidateId: optStr(o, 'bestCandidateId', 'jobFinished'),
    speedupEager: optNum(o, 'speedupEager', 'jobFinished'),
    message: str(o, 'message', 'jobFinished', ''),
    ...(optBool(o, 'needsGpu', 'jobFinished') ? { needsGpu: true } : {}),
  };
}

export function parseOptimizeResult(v: unknown): OptimizeResult {
  const o = obj(v, 'optimize result');
  return { jobId: str(o, 'jobId', 'optimize result') };
}

export function parseJobSummary(v: unknown, where = 'job'): JobSummary {
  const o = obj(v, where);
  return {
    jobId: str(o, 'jobId', where),
    uri: str(o, 'uri', where, ''),
    state: str(o, 'state', where, 'running'),
    phase: optStr(o, 'phase', where),
    startedAt: optStr(o, 'startedAt', where),
    bestCandidateId: optStr(o, 'bestCandidateId', where),
    logPath: optStr(o, 'logPath', where),
  };
}

export function parseListJobsResult(v: unknown): JobSummary[] {
  const o = obj(v, 'listJobs result');
  return array(o, 'jobs', 'listJobs result').map((j, i) => parseJobSummary(j, `jobs[${i}]`));
}

export function parseCandidateDiffArgs(v: unknown): CandidateDiffArgs {
  const o = obj(v, 'diff args');
  return {
    jobId: str(o, 'jobId', 'diff args'),
    candidateId: str(o, 'candidateId', 'diff args'),
    uri: str(o, 'uri', 'diff args'),
    range: parseRange(o.range, 'diff args.range'),
    newText: str(o, 'newText', 'diff args'),
  };
}

/** The arguments of the host's "Accept anyway…" lens on a candidate the verifier did not pass. */
export interface AcceptUnverifiedArgs {
  jobId: string;
  candidateId: string;
  title: string;
  status: string;
  failedChecks: string[];
}

export function parseAcceptUnverifiedArgs(v: unknown): AcceptUnverifiedArgs {
  const o = obj(v, 'accept args');
  return {
    jobId: str(o, 'jobId', 'accept args'),
    candidateId: str(o, 'candidateId', 'accept args'),
    title: str(o, 'title', 'accept args', ''),
    status: str(o, 'status', 'accept args', 'unverified'),
    failedChecks: strArray(o, 'failedChecks', 'accept args'),
  };
}

/** A job event as carried by a notification (and by a line of a job's JSONL log). */
export type JobEvent =
  | { method: typeof Methods.plan; params: PlanParams }
  | { method: typeof Methods.candidate; params: CandidateParams }
  | { method: typeof Methods.profile; params: ProfileParams }
  | { method: typeof Methods.log; params: LogParams }
  | { method: typeof Methods.jobFinished; params: JobFinishedParams };

/** Parses a notification into a typed event; undefined for methods that are not job events. */
export function parseJobEvent(method: string, params: unknown): JobEvent | undefined {
  switch (method) {
    case Methods.plan: return { method, params: parsePlan(params) };
    case Methods.candidate: return { method, params: parseCandidateParams(params) };
    case Methods.profile: return { method, params: parseProfile(params) };
    case Methods.log: return { method, params: parseLog(params) };
    case Methods.jobFinished: return { method, params: parseJobFinished(params) };
    default: return undefined;
  }
}
