// The progress notification of a running job: what the job is doing (from $/progress and
// the job's events), with Cancel wired to stitchcuda/cancelJob. It closes when the job ends.

import * as vscode from 'vscode';
import { JobStore, JobView } from '../model/jobStore';
import { basename, candidateSummary, jobOutcomeNotice } from '../model/format';
import { jobDiagnostic } from '../model/jobDiagnostics';
import { ProgressReport } from '../features/jobFeature';

export interface JobProgress {
  /** Feed $/progress reports for the job's token. */
  report(r: ProgressReport): void;
  /** Known once stitchcuda/optimize answered. */
  attach(jobId: string): void;
  /** The request failed before a job existed. */
  fail(): void;
}

/** Says why a job failed in its own way (returns true), e.g. an interpreter without PyTorch. */
export type FailureHandler = (job: JobView) => boolean;

/** The job's outcome, once, when the progress closes (not for jobs reopened from a log). */
function announce(job: JobView, onFailure?: FailureHandler): void {
  const { state } = job;
  const text = jobOutcomeNotice(job);
  if (state === 'failed' && onFailure?.(job)) return;
  // An error in the model itself: name the user's file (the host's message names its snapshot),
  // and go to the line; the diagnostic is there too.
  const located = state === 'failed' ? jobDiagnostic(job) : undefined;
  if (located) {
    const go = 'Go to error';
    void vscode.window.showErrorMessage(`StitchCUDA: ${basename(job.uri)}:${located.line + 1}: ${located.message}`, go, 'Show log').then((pick) => {
      if (pick === go) {
        const at = new vscode.Range(located.line, 0, located.line, 0);
        void vscode.window.showTextDocument(vscode.Uri.parse(job.uri), { selection: at, preview: false });
      } else if (pick) void vscode.commands.executeCommand('stitchcuda.showLog');
    });
    return;
  }
  if (state === 'improved' || state === 'noImprovement') {
    void vscode.window.showInformationMessage(text, 'Show plan').then((pick) => {
      if (pick) void vscode.commands.executeCommand('stitchcuda.showPlan');
    });
  } else if (state === 'failed') {
    void vscode.window.showErrorMessage(text, 'Show log').then((pick) => {
      if (pick) void vscode.commands.executeCommand('stitchcuda.showLog');
    });
  }
}

export function showJobProgress(
  store: JobStore, uri: string, cancel: (jobId: string) => Promise<void>, onFailure?: FailureHandler,
): JobProgress {
  let jobId: string | undefined;
  let last: vscode.Progress<{ message?: string; increment?: number }> | undefined;
  let lastPct = 0;
  let finish: () => void = () => undefined;
  let cancelRequested = false;
  const buffered: ProgressReport[] = [];
  const done = new Promise<void>((resolve) => { finish = resolve; });

  const fromEvents = (): string | undefined => {
    const job = jobId ? store.get(jobId) : undefined;
    if (!job) return undefined;
    if (job.candidates.length) {
      const c = job.candidates[job.candidates.length - 1];
      return `${job.candidates.length} candidate${job.candidates.length === 1 ? '' : 's'} · latest: ${c.title || c.id} (${candidateSummary(c)})`;
    }
    if (job.tasks.length) return `plan: ${job.tasks.length} task${job.tasks.length === 1 ? '' : 's'}`;
    return job.phase ? job.phase.toLowerCase() : undefined;
  };

  const apply = (r: ProgressReport) => {
    if (!last) { buffered.push(r); return; }
    let increment: number | undefined;
    if (r.percentage !== undefined && r.percentage > lastPct) { increment = r.percentage - lastPct; lastPct = r.percentage; }
    last.report({ message: r.message ?? fromEvents(), increment });
  };

  const sub = store.onDidChange((id) => {
    if (id !== jobId) return;
    const job = store.get(id);
    if (job && job.state !== 'running') {
      finish();
      announce(job, onFailure);
      return;
    }
    last?.report({ message: fromEvents() });
  });

  void vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `StitchCUDA: optimizing ${basename(uri)}`, cancellable: true },
    async (progress, token) => {
      last = progress;
      for (const r of buffered.splice(0)) apply(r);
      token.onCancellationRequested(() => {
        if (jobId) {
          progress.report({ message: 'cancelling…' });
          cancel(jobId).catch(() => finish());
        } else {
          cancelRequested = true; // cancel the job as soon as its id is known
          finish();
        }
      });
      await done;
      sub.dispose();
    },
  );

  return {
    report: apply,
    attach(id: string) {
      jobId = id;
      if (cancelRequested) void cancel(id).catch(() => undefined);
      const job = store.get(id);
      if (job && job.state !== 'running') finish();
    },
    fail: () => finish(),
  };
}
