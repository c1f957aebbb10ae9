// The language client that starts and talks to `stitchcuda serve` over stdio: the launch
// (settings, bundled binary, the Python interpreter, API key through the environment), restarts,
// and the state the status bar shows. Features register here; views read the JobStore.

import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import {
  CloseAction, CodeLensRequest, ErrorAction, LanguageClient, LanguageClientOptions, RevealOutputChannelOn, ServerOptions,
  State,
} from 'vscode-languageclient/node';
import { NotificationFeature } from './features/notificationFeature';
import { JobFeature } from './features/jobFeature';
import { JobStore } from './model/jobStore';
import { HostState, jobOutcomeLabel } from './model/format';
import {
  Methods, parseCandidateParams, parseJobFinished, parseLog, parsePlan, parseProfile,
} from './model/protocol';
import { HostLocation, hostLaunch, readSettings, resolveHost, secretKey, Settings } from './model/settings';
import { describeInterpreter, hostPython, Interpreter, interpreterProblem } from './model/interpreter';
import { harnessDirCandidates } from './model/programExport';
import { defaultResource, Interpreters } from './interpreter';
import { hostLogChannel } from './views/hostLogChannel';

export const DOCUMENT_SELECTOR = [
  { scheme: 'file', language: 'python' },
  { scheme: 'untitled', language: 'python' },
  { scheme: 'file', language: 'cuda-cpp' },
];

const MAX_RESTARTS = 4;
const RESTART_WINDOW_MS = 3 * 60 * 1000;

export function currentSettings(): Settings {
  const cfg = vscode.workspace.getConfiguration('stitchcuda');
  return readSettings((k) => cfg.get(k));
}

export class HostClient implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private jobs: JobFeature | undefined;
  private hostState: HostState = 'stopped';
  private readonly stateEmitter = new vscode.EventEmitter<HostState>();
  readonly onDidChangeState = this.stateEmitter.event;
  private restarts: number[] = [];
  private stateSub: vscode.Disposable | undefined;
  /** Whether the current client reached Running once: a host that never started is not restarted. */
  private wasRunning = false;
  /** The interpreter and the binary the current host was started with. */
  private python: Interpreter | undefined;
  private location: HostLocation | undefined;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly output: vscode.LogOutputChannel,
    private readonly store: JobStore,
    readonly interpreters: Interpreters,
  ) {}

  get state(): HostState {
    return this.hostState;
  }

  /** The interpreter the running host's harness uses; undefined while no host was started. */
  get interpreter(): Interpreter | undefined {
    return this.client ? this.python : undefined;
  }

  /**
   * Makes the host run the interpreter chosen for `resource` (a model file): a host started with
   * another one is restarted when no job runs; with jobs running it keeps its interpreter and says so.
   */
  async useInterpreterFor(resource: vscode.Uri): Promise<void> {
    const wanted = await this.interpreters.resolve(resource);
    if (this.starting) await this.starting.catch(() => undefined);
    if (!this.client) {
      await this.start(resource, wanted);
      return;
    }
    if (this.python && this.python.path === wanted.path) return;
    if (this.store.running().length > 0) {
      const now = this.python ? describeInterpreter(this.python) : 'another interpreter';
      this.output.warn(`${resource.fsPath} uses ${describeInterpreter(wanted)}, but the host runs ${now} and has a job running; this job uses ${now}`);
      void vscode.window.showWarningMessage(
        `StitchCUDA: this job runs with ${now}, not ${wanted.path}: another job is running. "StitchCUDA: Restart host" once it ends switches the interpreter.`);
      return;
    }
    this.output.info(`the interpreter for ${resource.fsPath} is ${describeInterpreter(wanted)}; restarting the host with it`);
    await this.restart(resource, wanted);
  }

  /** The folder holding the harness (`stitchcuda_harness`): bundled with the extension, else above the host binary. */
  harnessDir(): string | undefined {
    const settings = currentSettings();
    const loc = this.location ?? resolveHost(settings, this.context.extensionPath, process.platform, process.arch, (p) => fs.existsSync(p));
    let command = loc.command;
    if (!/[\\/]/.test(command)) {
      // On PATH: where the shell would find it.
      for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
        if (dir && fs.existsSync(path.join(dir, command))) { command = path.join(dir, command); break; }
      }
    }
    try {
      command = fs.realpathSync(command);
    } catch {
      // keep the path as given
    }
    return harnessDirCandidates(command, loc.bundledRoot).find((d) => fs.existsSync(path.join(d, 'stitchcuda_harness')));
  }

  private setState(s: HostState): void {
    if (s === this.hostState) return;
    this.hostState = s;
    this.stateEmitter.fire(s);
  }

  /** The job requests, once the host runs; throws a clear error otherwise. */
  async ready(): Promise<JobFeature> {
    if (this.starting || !this.client || this.hostState === 'stopped') await this.start();
    if (!this.jobs) throw new Error('the StitchCUDA host is not running; see "StitchCUDA: Show log"');
    return this.jobs;
  }

  /**
   * Starts the host with the interpreter for `resource` (default: the active Python file, else the
   * workspace). Concurrent calls share one start.
   */
  async start(resource?: vscode.Uri, interpreter?: Interpreter): Promise<void> {
    if (this.starting) return this.starting;
    if (this.client) return;
    const starting = this.startClient(resource, interpreter).finally(() => {
      if (this.starting === starting) this.starting = undefined;
    });
    this.starting = starting;
    return starting;
  }

  private starting: Promise<void> | undefined;

  private async startClient(resource: vscode.Uri | undefined, interpreter: Interpreter | undefined): Promise<void> {
    const python = interpreter ?? await this.interpreters.resolve(resource ?? defaultResource());
    const settings = currentSettings();
    const loc = resolveHost(settings, this.context.extensionPath, process.platform, process.arch, (p) => fs.existsSync(p));
    const apiKey = settings.brain === 'builtin' ? undefined : await this.context.secrets.get(secretKey(settings.brain));
    // The host takes one interpreter for its harness workers: initializationOptions.python (and
    // STITCHCUDA_PYTHON); the default is left to the host ($STITCHCUDA_PYTHON, else python3).
    const launch = hostLaunch(loc, { ...settings, pythonPath: hostPython(python) }, process.env, apiKey);
    this.output.info(`starting the host: ${launch.command} ${launch.args.join(' ')} (${loc.source}); Python: ${describeInterpreter(python)}`);
    this.python = python;
    this.location = loc;

    const serverOptions: ServerOptions = {
      // No `transport`: languageclient would append --stdio; `serve` speaks stdio by default.
      command: launch.command, args: launch.args, options: { env: launch.env },
    };
    const store = this.store;
    const clientOptions: LanguageClientOptions = {
      documentSelector: DOCUMENT_SELECTOR,
      outputChannel: hostLogChannel(this.output),
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: launch.initializationOptions,
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue }),
        closed: () => this.onClosed(),
      },
      middleware: {
        // Accept and Reject run on the host; mirror their outcome in the plan view at once.
        executeCommand: async (command, args, next) => {
          const ref = args[0] as { jobId?: string; candidateId?: string } | undefined;
          try {
            const result = await next(command, args);
            if (ref?.jobId && ref.candidateId) {
              if (command === 'stitchcuda.rejectCandidate') store.setCandidateStatus(ref.jobId, ref.candidateId, 'rejected');
              if (command === 'stitchcuda.acceptCandidate' && result !== false) store.setCandidateStatus(ref.jobId, ref.candidateId, 'accepted');
            }
            return result;
          } catch (e) {
            const message = e instanceof Error ? e.message : String(e);
            this.output.error(`${command} failed: ${message}`);
            void vscode.window.showErrorMessage(`StitchCUDA: ${message}`);
            return undefined;
          }
        },
      },
    };

    const client = new LanguageClient('stitchcuda', 'StitchCUDA host', serverOptions, clientOptions);
    const warn = (m: string) => this.output.warn(m);
    client.registerFeature(new NotificationFeature(client, Methods.plan, parsePlan, (p) => store.plan(p), warn));
    client.registerFeature(new NotificationFeature(client, Methods.candidate, parseCandidateParams, (p) => {
      store.candidate(p);
      this.refreshLensesSoon(); // VS Code asks for lenses on edits only; a new candidate needs its lens now
    }, warn));
    client.registerFeature(new NotificationFeature(client, Methods.profile, parseProfile, (p) => store.profile(p), warn));
    client.registerFeature(new NotificationFeature(client, Methods.log, parseLog, (p) => {
      const line = `[${p.jobId || 'host'}]${p.phase ? ` ${p.phase}:` : ''} ${p.message}`;
      // An interpreter without PyTorch is told once, in words that name the setting, when its job
      // ends (Interpreters.showProblem); the worker's own words stay in the debug log.
      if (interpreterProblem(p.message)) this.output.debug(line);
      else if (p.level === 'error') this.output.error(line);
      else if (p.level === 'warning') this.output.warn(line);
      else if (p.level === 'debug') this.output.debug(line);
      else this.output.info(line);
      store.log(p);
    }, warn));
    client.registerFeature(new NotificationFeature(client, Methods.jobFinished, parseJobFinished, (p) => {
      const line = `[${p.jobId}] finished: ${jobOutcomeLabel(p)}${p.message ? ` — ${p.message}` : ''}`;
      if (interpreterProblem(p.message)) this.output.debug(line);
      else this.output.info(line);
      store.finished(p);
    }, warn));
    const jobs = new JobFeature(client);
    client.registerFeature(jobs);

    this.client = client;
    this.jobs = jobs;
    this.wasRunning = false;
    this.stateSub = client.onDidChangeState((e) => {
      if (e.newState === State.Running) {
        this.wasRunning = true;
        this.setState('running');
      } else if (e.newState === State.Starting) this.setState('starting');
      else this.setState('stopped');
    });
    this.setState('starting');
    try {
      await client.start();
      this.setState('running');
      await this.refreshJobs();
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      this.output.error(`the host did not start: ${message}`);
      await this.disposeClient();
      this.setState('stopped');
      const open = 'Open Settings';
      void vscode.window.showErrorMessage(
        `StitchCUDA: could not start the host "${launch.command}": ${message}. Set "stitchcuda.hostPath" or install the host.`, open,
      ).then((pick) => {
        if (pick === open) void vscode.commands.executeCommand('workbench.action.openSettings', 'stitchcuda.hostPath');
      });
      throw e;
    }
  }

  private lensTimer: ReturnType<typeof setTimeout> | undefined;

  /** Re-queries the host's CodeLenses (what workspace/codeLens/refresh does), coalesced. */
  private refreshLensesSoon(): void {
    if (this.lensTimer) return;
    this.lensTimer = setTimeout(() => {
      this.lensTimer = undefined;
      const feature = this.client?.getFeature(CodeLensRequest.method);
      const fired = new Set<unknown>();
      for (const doc of vscode.workspace.textDocuments) {
        const provider = feature?.getProvider(doc);
        if (provider && !fired.has(provider)) {
          fired.add(provider);
          provider.onDidChangeCodeLensEmitter.fire();
        }
      }
    }, 100);
  }

  /** After a crash: restart a few times, then stay down and say so. */
  private onClosed(): { action: CloseAction; message?: string } {
    for (const job of this.store.running()) this.store.finished({ jobId: job.jobId, state: 'failed', message: 'the host stopped' });
    if (!this.wasRunning) return { action: CloseAction.DoNotRestart, message: 'The StitchCUDA host did not start; see "StitchCUDA: Show log".' };
    const now = Date.now();
    this.restarts = this.restarts.filter((t) => now - t < RESTART_WINDOW_MS);
    this.restarts.push(now);
    if (this.restarts.length > MAX_RESTARTS) {
      this.output.error('the host stopped repeatedly; not restarting. Run "StitchCUDA: Restart host" after fixing the cause.');
      return { action: CloseAction.DoNotRestart, message: 'The StitchCUDA host stopped repeatedly; see "StitchCUDA: Show log".' };
    }
    this.output.warn('the host stopped; restarting it');
    return { action: CloseAction.Restart };
  }

  /** Jobs the host still knows (running ones, after a restart of the window). */
  private async refreshJobs(): Promise<void> {
    try {
      for (const s of await this.jobs!.listJobs()) this.store.summary(s);
    } catch (e) {
      this.output.debug(`stitchcuda/listJobs: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  async restart(resource?: vscode.Uri, interpreter?: Interpreter): Promise<void> {
    this.output.info('restarting the host');
    this.restarts = [];
    await this.disposeClient();
    await this.start(resource, interpreter);
  }

  private async disposeClient(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.jobs = undefined;
    this.stateSub?.dispose();
    this.stateSub = undefined;
    if (client) {
      try {
        await client.dispose(5000);
      } catch (e) {
        this.output.debug(`stopping the host: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    this.setState('stopped');
  }

  async dispose(): Promise<void> {
    await this.disposeClient();
    this.stateEmitter.dispose();
  }
}
