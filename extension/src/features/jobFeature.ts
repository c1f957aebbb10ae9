// The job requests (stitchcuda/optimize, cancelJob, listJobs, openJobLog, score) and the work-done
// progress of an optimize request, whose token the client makes and so also listens to.

import { randomUUID } from 'crypto';
import type { ClientCapabilities, FeatureState, StaticFeature } from 'vscode-languageclient';
import { WorkDoneProgress, WorkDoneProgressCreateRequest } from 'vscode-languageclient';
import type { LanguageClient } from 'vscode-languageclient/node';
import { ProgressPart } from 'vscode-languageclient/lib/common/progressPart';
import {
  JobSummary, Methods, OptimizeParams, parseListJobsResult, parseOptimizeResult,
} from '../model/protocol';

export interface ProgressReport { message?: string; percentage?: number; done?: boolean }
type ProgressListener = (r: ProgressReport) => void;

export class JobFeature implements StaticFeature {
  private readonly ownTokens = new Map<string, ProgressListener>();
  private disposables: { dispose(): unknown }[] = [];

  constructor(private readonly client: LanguageClient) {}

  fillClientCapabilities(capabilities: ClientCapabilities): void {
    (capabilities.window ??= {}).workDoneProgress = true;
  }

  initialize(): void {
    this.clear();
    // The token of an optimize request is ours (client-initiated progress). If the host
    // also sends window/workDoneProgress/create for it, accept without opening a second
    // progress UI; any other token gets languageclient's usual window progress.
    this.disposables.push(this.client.onRequest(WorkDoneProgressCreateRequest.type, (params) => {
      if (typeof params.token === 'string' && this.ownTokens.has(params.token)) return null;
      new ProgressPart(this.client, params.token);
      return null;
    }));
  }

  getState(): FeatureState {
    return { kind: 'static' };
  }

  clear(): void {
    for (const d of this.disposables) d.dispose();
    this.disposables = [];
  }

  /** Starts a job; progress reports for it go to onProgress until the job's progress ends. */
  async optimize(params: Omit<OptimizeParams, 'workDoneToken'>, onProgress: ProgressListener): Promise<string> {
    const token = `stitchcuda-${randomUUID()}`;
    this.ownTokens.set(token, onProgress);
    const sub = this.client.onProgress(WorkDoneProgress.type, token, (value) => {
      if (value.kind === 'end') {
        onProgress({ message: value.message, done: true });
        this.ownTokens.delete(token);
        sub.dispose();
      } else {
        onProgress({ message: value.message, percentage: value.percentage });
      }
    });
    try {
      const result = await this.client.sendRequest(Methods.optimize, { ...params, workDoneToken: token });
      return parseOptimizeResult(result).jobId;
    } catch (e) {
      this.ownTokens.delete(token);
      sub.dispose();
      throw e;
    }
  }

  async cancel(jobId: string): Promise<void> {
    await this.client.sendRequest(Methods.cancelJob, { jobId });
  }

  async listJobs(): Promise<JobSummary[]> {
    return parseListJobsResult(await this.client.sendRequest(Methods.listJobs, {}));
  }

  /** The rubric reward of a job's candidate (protocol/SCORE.md), unparsed: model/rubric.ts reads it. */
  async score(jobId: string, candidateId: string): Promise<unknown> {
    return this.client.sendRequest('stitchcuda/score', { jobId, candidateId });
  }

  async openJobLog(path: string): Promise<string> {
    return parseOptimizeResult(await this.client.sendRequest(Methods.openJobLog, { path })).jobId;
  }
}
