// The plan view's tree as plain data: a job, its tasks, each task's candidates, and the
// operators left in PyTorch. planView.ts turns these nodes into TreeItems. Pure.

import { JobView } from './jobStore';
import { PlanCoverage, Range } from './protocol';
import { basename, candidateSummary, formatSpeedup, jobMessage, jobOutcomeLabel, taskDescription, taskTooltip } from './format';

export type NodeIcon =
  | 'job-running' | 'job-improved' | 'job-done' | 'job-failed'
  | 'task-pending' | 'task-active' | 'task-done' | 'task-skipped'
  | 'candidate-verified' | 'candidate-unverified' | 'candidate-failed' | 'candidate-accepted' | 'candidate-rejected'
  | 'uncovered';

export interface PlanNode {
  id: string;
  label: string;
  description?: string;
  tooltip?: string;
  icon: NodeIcon;
  /** Where a click goes: the task's or candidate's range in the job's document. */
  uri?: string;
  range?: Range;
  contextValue: string;
  children: PlanNode[];
}

function jobIcon(state: string): NodeIcon {
  if (state === 'running') return 'job-running';
  if (state === 'improved') return 'job-improved';
  if (state === 'failed') return 'job-failed';
  return 'job-done';
}

function taskIcon(status: string): NodeIcon {
  if (status === 'active') return 'task-active';
  if (status === 'done') return 'task-done';
  if (status === 'skipped') return 'task-skipped';
  return 'task-pending';
}

function candidateIcon(status: string): NodeIcon {
  switch (status) {
    case 'verified': return 'candidate-verified';
    case 'failed': return 'candidate-failed';
    case 'accepted': return 'candidate-accepted';
    case 'rejected': return 'candidate-rejected';
    default: return 'candidate-unverified';
  }
}

export function jobNode(job: JobView): PlanNode {
  const candidateNodes = (taskId: string | undefined): PlanNode[] =>
    job.candidates
      .filter((c) => (taskId === undefined ? !job.tasks.some((t) => t.id === c.taskId) : c.taskId === taskId))
      .map((c) => ({
        id: `${job.jobId}/candidate/${c.id}`,
        label: c.title || `Candidate ${c.id}`,
        description: candidateSummary(c),
        tooltip: [
          c.title || c.id,
          `Status: ${candidateSummary(c)}`,
          c.speedupCompile !== undefined ? `vs torch.compile: ${formatSpeedup(c.speedupCompile)}` : '',
          c.failedChecks.length ? `Failed checks: ${c.failedChecks.join(', ')}` : '',
        ].filter(Boolean).join('\n'),
        icon: candidateIcon(c.status),
        uri: job.uri,
        range: c.range,
        contextValue: `candidate-${c.status}`,
        children: [],
      }));

  const tasks: PlanNode[] = job.tasks.map((t) => ({
    id: `${job.jobId}/task/${t.id}`,
    label: t.title,
    description: taskDescription(t),
    tooltip: taskTooltip(t),
    icon: taskIcon(t.status),
    uri: job.uri,
    range: t.range,
    contextValue: `task-${t.status}`,
    children: candidateNodes(t.id),
  }));
  const loose = candidateNodes(undefined);
  const covered = job.coverage ? coverageText(job.coverage) : '';
  const uncovered: PlanNode[] = job.uncovered.length
    ? [{
      id: `${job.jobId}/uncovered`,
      label: 'Left in PyTorch',
      description: covered ? `${covered} compiled · ${job.uncovered.join(', ')}` : job.uncovered.join(', '),
      tooltip: `Operators the plan does not replace; they run in PyTorch between the compiled segments:\n${
        job.uncovered.join('\n')}${covered ? `\nCompiled: ${covered}` : ''}`,
      icon: 'uncovered',
      contextValue: 'uncovered',
      children: [],
    }]
    : [];

  const best = job.candidates.find((c) => c.id === job.bestCandidateId);
  const speed = job.speedupEager ?? best?.speedupEager;
  const state = job.state === 'improved' && speed !== undefined ? `improved ${formatSpeedup(speed)}` : jobOutcomeLabel(job);
  const counts = job.tasks.length ? `${job.tasks.length} task${job.tasks.length === 1 ? '' : 's'} · ` : '';
  return {
    id: job.jobId,
    label: basename(job.uri) || job.jobId,
    description: `${counts}${state}`,
    tooltip: [`Job ${job.jobId}`, job.uri, jobMessage(job) ?? ''].filter(Boolean).join('\n'),
    icon: jobIcon(job.state),
    uri: job.uri,
    contextValue: job.state === 'running' ? 'job-running' : 'job-finished',
    children: [...tasks, ...loose, ...uncovered],
  };
}

export function planRoots(jobs: JobView[]): PlanNode[] {
  return jobs.map(jobNode);
}

/** "12/15 ops, 86% of time": how much of the forward the compiled code covers. */
export function coverageText(c: PlanCoverage): string {
  const share = `${Math.round(c.timeShare * 100)}% of ${c.timeBasis === 'profile' ? 'time' : 'bytes'}`;
  return `${c.coveredOperators}/${c.operators} ops, ${share}`;
}
