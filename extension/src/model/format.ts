// Words and numbers the views show: speedups, candidate and task labels, the status-bar
// text, the end-of-line profile text. Pure: no 'vscode' import.

import { Candidate, JobState, PlanTask, ProfileLine, ProfileParams } from './protocol';
import { JobView } from './jobStore';
import { interpreterProblem, interpreterProblemText } from './interpreter';

/** 1.8× with two significant digits below 10, whole numbers above. */
export function formatSpeedup(x: number): string {
  if (!Number.isFinite(x) || x <= 0) return '?×';
  if (x >= 10) return `${Math.round(x)}×`;
  return `${x.toFixed(x >= 1 ? 1 : 2)}×`;
}

export function formatMicros(us: number): string {
  if (us >= 1000) return `${(us / 1000).toFixed(us >= 10000 ? 0 : 1)} ms`;
  return `${us >= 100 ? Math.round(us) : us.toFixed(1)} µs`;
}

export function formatShare(share: number): string {
  return `${Math.round(share * 100)}%`;
}

/** The wording of the Accept lens; the host makes the real lens, this is for the plan view. */
export function candidateSummary(c: Candidate): string {
  switch (c.status) {
    case 'verified':
      return c.speedupEager !== undefined ? `${formatSpeedup(c.speedupEager)}, verified` : 'verified';
    case 'failed':
      return c.failedChecks.length ? `failed: ${c.failedChecks.join(', ')}` : 'failed';
    case 'accepted':
      return 'accepted';
    case 'rejected':
      return 'rejected';
    default:
      return 'unverified';
  }
}

export function taskDescription(t: PlanTask): string {
  const parts: string[] = [];
  if (t.technique) parts.push(t.technique);
  if (t.expectedGainPct !== undefined) parts.push(`~${Math.round(t.expectedGainPct)}% expected`);
  return parts.join(' · ');
}

export function taskTooltip(t: PlanTask): string {
  const lines = [t.title];
  if (t.operators.length) lines.push(`Operators: ${t.operators.join(', ')}`);
  if (t.technique) lines.push(`Technique: ${t.technique}`);
  if (t.expectedGainPct !== undefined) lines.push(`Expected gain: ${Math.round(t.expectedGainPct)}%`);
  lines.push(`Lines ${t.range.start.line + 1}–${t.range.end.line + 1} · ${t.status}`);
  return lines.join('\n');
}

export function jobStateLabel(state: JobState): string {
  switch (state) {
    case 'running': return 'running';
    case 'improved': return 'improved';
    case 'noImprovement': return 'no improvement';
    case 'failed': return 'failed';
    case 'cancelled': return 'cancelled';
    default: return state;
  }
}

/** What a finished job came to: a job that had no GPU timed nothing, so it is "not measured", not "no improvement". */
export function jobOutcomeLabel(job: Pick<JobView, 'state' | 'needsGpu' | 'message'>): string {
  if (job.state === 'noImprovement' && job.needsGpu) return 'not measured (no GPU)';
  const problem = job.state === 'failed' ? interpreterProblem(job.message) : undefined;
  if (problem) return problem === 'noTorch' ? 'Python has no PyTorch' : 'Python did not start';
  return jobStateLabel(job.state);
}

/**
 * The job's message as the user reads it: a failure of the interpreter (the harness cannot import
 * PyTorch) says which setting fixes it instead of the worker's traceback line.
 */
export function jobMessage(job: Pick<JobView, 'state' | 'message'>): string | undefined {
  const problem = job.state === 'failed' ? interpreterProblem(job.message) : undefined;
  return problem ? interpreterProblemText(problem) : job.message;
}

/** The notification when a job ends: its outcome, then the host's words for it. */
export function jobOutcomeNotice(job: Pick<JobView, 'state' | 'needsGpu' | 'message'>): string {
  const label = jobOutcomeLabel(job);
  const message = jobMessage(job);
  if (label !== jobStateLabel(job.state)) return `StitchCUDA: ${label}${message ? `: ${message}` : ''}`;
  return `StitchCUDA: ${message || label}`;
}

export function basename(uri: string): string {
  const noQuery = uri.split(/[?#]/)[0];
  const parts = noQuery.split('/');
  return decodeURIComponent(parts[parts.length - 1] || noQuery);
}

export type HostState = 'starting' | 'running' | 'stopped';

export interface StatusBarModel {
  text: string;
  tooltip: string;
  busy: boolean;
  /** What a click runs: the plan, the log, or the setting that fixes the last job's failure. */
  command: { command: string; arguments?: unknown[] };
}

const SHOW_PLAN = { command: 'stitchcuda.showPlan' };

/** The status-bar item: the host's state, else the newest job's. */
export function statusBarModel(host: HostState, jobs: JobView[]): StatusBarModel {
  if (host === 'stopped') {
    return {
      text: '$(error) StitchCUDA: host stopped', busy: false, command: { command: 'stitchcuda.showLog' },
      tooltip: 'The StitchCUDA host is not running. Click to show the log; run "StitchCUDA: Restart host" to start it.',
    };
  }
  if (host === 'starting') return { text: '$(loading~spin) StitchCUDA', tooltip: 'Starting the StitchCUDA host…', busy: true, command: SHOW_PLAN };
  const running = jobs.filter((j) => j.state === 'running');
  if (running.length > 0) {
    const j = running[0];
    const phase = j.phase ? j.phase.toLowerCase() : j.tasks.length ? 'coding' : 'planning';
    const cands = j.candidates.length ? ` · ${j.candidates.length} candidate${j.candidates.length === 1 ? '' : 's'}` : '';
    const more = running.length > 1 ? ` (+${running.length - 1})` : '';
    return { text: `$(sync~spin) StitchCUDA: ${phase}${cands}${more}`, tooltip: `Optimizing ${basename(j.uri)} (job ${j.jobId}). Click to show the plan.`, busy: true, command: SHOW_PLAN };
  }
  const last = jobs[0];
  if (!last) return { text: '$(zap) StitchCUDA', tooltip: 'StitchCUDA is ready. Run "Optimize with StitchCUDA" on a model file.', busy: false, command: SHOW_PLAN };
  if (last.state === 'improved') {
    const best = last.candidates.find((c) => c.id === last.bestCandidateId);
    const sp = last.speedupEager ?? best?.speedupEager;
    return { text: `$(check) StitchCUDA${sp !== undefined ? `: ${formatSpeedup(sp)}` : ': improved'}`, tooltip: last.message || `Job ${last.jobId} improved ${basename(last.uri)}.`, busy: false, command: SHOW_PLAN };
  }
  const label = jobOutcomeLabel(last);
  const icon = last.state === 'failed' ? '$(warning)' : '$(zap)';
  const interpreter = last.state === 'failed' && interpreterProblem(last.message) !== undefined;
  return {
    text: `${icon} StitchCUDA: ${label}`, tooltip: jobMessage(last) || `Job ${last.jobId}: ${label}.`, busy: false,
    command: interpreter ? { command: 'workbench.action.openSettings', arguments: ['stitchcuda.pythonPath'] } : SHOW_PLAN,
  };
}

export interface LineDecoration { line: number; text: string }

/**
 * End-of-line texts for a profile: the host's inlineText where it gave one, for the hottest
 * lines (share at least minShare), at most maxLines of them, in line order.
 */
export function profileDecorations(p: ProfileParams, maxLines = 8, minShare = 0.02): LineDecoration[] {
  return [...p.lines]
    .filter((l) => l.share >= minShare || l.inlineText !== '')
    .sort((a, b) => b.share - a.share)
    .slice(0, maxLines)
    .map((l) => ({ line: l.line, text: l.inlineText || defaultInlineText(l, p.timeKind) }))
    .sort((a, b) => a.line - b.line);
}

export function defaultInlineText(l: ProfileLine, timeKind?: string): string {
  const achieved = l.achievedPct !== undefined ? ` ${Math.round(l.achievedPct)}%` : '';
  const bound = l.bound ? ` · ${l.bound}-bound${achieved}` : '';
  const cpu = timeKind === 'cpu' ? ' CPU' : '';
  return `${formatMicros(l.gpuTimeUs)}${cpu} · ${formatShare(l.share)}${bound}`;
}

/** Why a candidate is not verified, for the confirmation before accepting it anyway. */
export function unverifiedReason(status: string, failedChecks: string[]): string {
  if (status === 'failed') {
    return failedChecks.length
      ? `it failed verification (${failedChecks.join(', ')}): its outputs or its run did not pass the verifier`
      : 'it failed verification';
  }
  return 'no GPU ran it, so its correctness against the original and its speed were never measured';
}
