// What the client knows about the host's jobs, built only from the stitchcuda/* events:
// plans, candidates, profiles, log lines and finishes. The views read it; nothing else
// writes it. Pure: no 'vscode' import.

import {
  Candidate, CandidateParams, JobEvent, JobFinishedParams, JobState, JobSummary, LogParams, Methods,
  PlanCoverage, PlanParams, PlanTask, ProfileParams,
} from './protocol';

export interface JobView {
  jobId: string;
  uri: string;
  state: JobState;
  phase?: string;
  tasks: PlanTask[];
  uncovered: string[];
  coverage?: PlanCoverage;
  /** In arrival order; a later event for the same id replaces the earlier one in place. */
  candidates: Candidate[];
  /** Profiles by subject ("reference" or a candidate id). */
  profiles: Map<string, ProfileParams>;
  logs: LogParams[];
  bestCandidateId?: string;
  speedupEager?: number;
  message?: string;
  /** The job ended without a GPU: its candidates were never timed or verified. */
  needsGpu?: boolean;
  startedOrder: number;
}

export type Listener = (jobId: string) => void;

const MAX_LOG_LINES = 2000;

export class JobStore {
  private readonly jobs = new Map<string, JobView>();
  private readonly listeners = new Set<Listener>();
  private counter = 0;

  onDidChange(listener: Listener): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  private fire(jobId: string): void {
    for (const l of [...this.listeners]) l(jobId);
  }

  private ensure(jobId: string, uri?: string): JobView {
    let job = this.jobs.get(jobId);
    if (!job) {
      job = {
        jobId, uri: uri ?? '', state: 'running', tasks: [], uncovered: [], candidates: [],
        profiles: new Map(), logs: [], startedOrder: ++this.counter,
      };
      this.jobs.set(jobId, job);
    } else if (uri && !job.uri) {
      job.uri = uri;
    }
    return job;
  }

  /** A job the client started: known before any event arrives. */
  started(jobId: string, uri: string): void {
    this.ensure(jobId, uri);
    this.fire(jobId);
  }

  /** Merges a job summary from stitchcuda/listJobs (state only; events carry the rest). */
  summary(s: JobSummary): void {
    const job = this.ensure(s.jobId, s.uri);
    job.state = s.state;
    job.phase = s.phase;
    job.bestCandidateId = s.bestCandidateId ?? job.bestCandidateId;
    this.fire(s.jobId);
  }

  apply(event: JobEvent): void {
    switch (event.method) {
      case Methods.plan: return this.plan(event.params);
      case Methods.candidate: return this.candidate(event.params);
      case Methods.profile: return this.profile(event.params);
      case Methods.log: return this.log(event.params);
      case Methods.jobFinished: return this.finished(event.params);
    }
  }

  plan(p: PlanParams): void {
    const job = this.ensure(p.jobId, p.uri);
    job.tasks = p.tasks;
    job.uncovered = p.uncovered;
    job.coverage = p.coverage;
    this.fire(p.jobId);
  }

  candidate(p: CandidateParams): void {
    const job = this.ensure(p.jobId, p.uri);
    const i = job.candidates.findIndex((c) => c.id === p.candidate.id);
    if (i >= 0) job.candidates[i] = p.candidate;
    else job.candidates.push(p.candidate);
    this.fire(p.jobId);
  }

  /** The host dropped a candidate (rejected, or superseded): forget it on the client too. */
  removeCandidate(jobId: string, candidateId: string): void {
    const job = this.jobs.get(jobId);
    if (!job) return;
    const before = job.candidates.length;
    job.candidates = job.candidates.filter((c) => c.id !== candidateId);
    if (job.candidates.length !== before) this.fire(jobId);
  }

  setCandidateStatus(jobId: string, candidateId: string, status: string): void {
    const c = this.jobs.get(jobId)?.candidates.find((x) => x.id === candidateId);
    if (c && c.status !== status) {
      c.status = status;
      this.fire(jobId);
    }
  }

  profile(p: ProfileParams): void {
    const job = this.ensure(p.jobId, p.uri);
    job.profiles.set(p.subject, p);
    this.fire(p.jobId);
  }

  log(p: LogParams): void {
    if (!p.jobId) return; // host-wide lines go to the output channel only
    const job = this.ensure(p.jobId);
    job.logs.push(p);
    if (job.logs.length > MAX_LOG_LINES) job.logs.splice(0, job.logs.length - MAX_LOG_LINES);
    if (p.phase) job.phase = p.phase;
    this.fire(p.jobId);
  }

  finished(p: JobFinishedParams): void {
    const job = this.ensure(p.jobId);
    job.state = p.state;
    job.bestCandidateId = p.bestCandidateId;
    job.speedupEager = p.speedupEager;
    job.message = p.message;
    job.needsGpu = p.needsGpu;
    this.fire(p.jobId);
  }

  get(jobId: string): JobView | undefined {
    return this.jobs.get(jobId);
  }

  /** Newest first. */
  all(): JobView[] {
    return [...this.jobs.values()].sort((a, b) => b.startedOrder - a.startedOrder);
  }

  running(): JobView[] {
    return this.all().filter((j) => j.state === 'running');
  }

  /** The profile to show for a document: the newest job's reference profile, else any. */
  profileFor(uri: string): ProfileParams | undefined {
    for (const job of this.all()) {
      if (job.uri !== uri && ![...job.profiles.values()].some((p) => p.uri === uri)) continue;
      const ref = job.profiles.get('reference');
      if (ref && ref.uri === uri) return ref;
      for (const p of job.profiles.values()) if (p.uri === uri) return p;
    }
    return undefined;
  }

  /**
   * The candidate whose program a document's "Show generated CUDA" / "Export optimized program"
   * mean: in the newest job for the document that has a program, the accepted candidate, else the
   * job's best verified one, else the newest that has a program.
   */
  programFor(uri: string): { job: JobView; candidate: Candidate } | undefined {
    for (const job of this.all()) {
      if (job.uri !== uri) continue;
      const withProgram = job.candidates.filter((c) => c.files?.length && c.newText && c.status !== 'rejected');
      const pick = withProgram.find((c) => c.status === 'accepted')
        ?? withProgram.find((c) => c.id === job.bestCandidateId)
        ?? withProgram.filter((c) => c.status !== 'failed').pop();
      if (pick) return { job, candidate: pick };
    }
    return undefined;
  }

  clear(): void {
    const ids = [...this.jobs.keys()];
    this.jobs.clear();
    for (const id of ids) this.fire(id);
  }
}
