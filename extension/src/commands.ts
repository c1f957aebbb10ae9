// The palette commands: optimize, cancel, show plan / log, restart the host, set an API key,
// reopen a past job from its log, reveal a task's code, show a candidate's CUDA, export it.

import { execFile } from 'child_process';
import * as fs from 'fs';
import * as vscode from 'vscode';
import { HostClient, currentSettings } from './hostClient';
import { JobStore } from './model/jobStore';
import { Brain, optimizeParams, secretKey } from './model/settings';
import { basename, jobStateLabel, unverifiedReason } from './model/format';
import { Candidate, parseAcceptUnverifiedArgs, Range } from './model/protocol';
import {
  candidateDir, cudaFile, exportEntries, ExportForm, KERNELBENCH_FILE, kernelbenchExportProcess, modelOfProgramCuda,
  parseCandidateRef, parseExportForm,
} from './model/programExport';
import { interpreterProblem } from './model/interpreter';
import { candidateOfDiff } from './model/candidateDiff';
import { showJobProgress } from './views/optimizeProgress';

const isCuda = (doc: vscode.TextDocument) => doc.languageId === 'cuda-cpp' || doc.fileName.endsWith('.cu');

/** The model a program's `.cu` was generated for (Accept's file set), or undefined. */
export function programCudaModel(doc: vscode.TextDocument): vscode.Uri | undefined {
  if (doc.uri.scheme !== 'file' || !isCuda(doc)) return undefined;
  const model = modelOfProgramCuda(doc.uri.fsPath, currentSettings().kernelsFolder, (p) => fs.existsSync(p));
  return model ? vscode.Uri.file(model) : undefined;
}

/** The candidate whose Diff is the active tab (either side of it, or any file of a multi-file Diff). */
function candidateOfActiveDiff() {
  const uris: vscode.Uri[] = [];
  const doc = vscode.window.activeTextEditor?.document;
  if (doc) uris.push(doc.uri);
  const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
  if (input instanceof vscode.TabInputTextDiff) uris.push(input.modified, input.original);
  // The multi-file changes editor (vscode.TabInputTextMultiDiff, newer than the API this builds against).
  const multi = (input as { textDiffs?: { original?: vscode.Uri; modified?: vscode.Uri }[] } | undefined)?.textDiffs;
  for (const d of Array.isArray(multi) ? multi : []) for (const u of [d.modified, d.original]) if (u) uris.push(u);
  return candidateOfDiff(uris);
}

/** An error already shown to the user. */
class Handled extends Error {}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

async function targetDocument(arg: unknown): Promise<vscode.TextDocument | undefined> {
  if (arg instanceof vscode.Uri) return vscode.workspace.openTextDocument(arg);
  return vscode.window.activeTextEditor?.document;
}

export function registerCommands(
  context: vscode.ExtensionContext, host: HostClient, store: JobStore, output: vscode.LogOutputChannel,
): void {
  const reg = (id: string, fn: (...args: any[]) => unknown) => context.subscriptions.push(vscode.commands.registerCommand(id, fn));

  reg('stitchcuda.optimize', async (arg?: unknown) => {
    let doc = await targetDocument(arg);
    // A program's .cu optimizes its model again; another .cu has no PyTorch model to verify against.
    const model = doc && programCudaModel(doc);
    if (doc && isCuda(doc) && !model) {
      void vscode.window.showWarningMessage(`StitchCUDA: ${basename(doc.uri.toString())} is not a program StitchCUDA wrote beside ` +
        'a model, so there is nothing to verify it against. Open the PyTorch model to optimize it.');
      return;
    }
    if (model) doc = await vscode.workspace.openTextDocument(model);
    if (!doc || doc.languageId !== 'python') {
      void vscode.window.showWarningMessage('StitchCUDA: open a PyTorch model (a Python file) to optimize it.');
      return;
    }
    if (doc.isDirty && !(await doc.save())) {
      void vscode.window.showWarningMessage('StitchCUDA: save the file first; the harness loads the model from disk.');
      return;
    }
    const settings = currentSettings();
    if (settings.brain !== 'builtin' && !(await context.secrets.get(secretKey(settings.brain)))) {
      output.warn(`no API key set for the ${settings.brain} brain; requests go out without one (fine for local servers)`);
    }
    const uri = doc.uri.toString();
    let jobs;
    try {
      // The interpreter selected for this file (stitchcuda.pythonPath, else the Python extension's).
      if (doc.uri.scheme === 'file') await host.useInterpreterFor(doc.uri);
      jobs = await host.ready();
    } catch (e) {
      return; // host.start already told the user
    }
    const python = host.interpreter;
    const progress = showJobProgress(store, uri, (id) => jobs.cancel(id), (job) => {
      const problem = interpreterProblem(job.message);
      if (!problem || !python) return false;
      void host.interpreters.showProblem(problem, python, job.message);
      return true;
    });
    try {
      const params = optimizeParams(uri, settings);
      const jobId = await jobs.optimize(params, (r) => progress.report(r));
      store.started(jobId, uri);
      progress.attach(jobId);
      output.info(`[${jobId}] optimizing ${basename(uri)} with the ${settings.brain} brain`);
      void vscode.commands.executeCommand('stitchcuda.plan.focus');
    } catch (e) {
      progress.fail();
      output.error(`stitchcuda/optimize failed: ${errorText(e)}`);
      void vscode.window.showErrorMessage(`StitchCUDA: could not start the optimization: ${errorText(e)}`);
    }
  });

  reg('stitchcuda.cancel', async (jobIdArg?: unknown) => {
    const running = store.running();
    let jobId = typeof jobIdArg === 'string' ? jobIdArg : undefined;
    if (!jobId) {
      if (running.length === 0) {
        void vscode.window.showInformationMessage('StitchCUDA: no optimization is running.');
        return;
      }
      if (running.length === 1) jobId = running[0].jobId;
      else {
        const pick = await vscode.window.showQuickPick(
          running.map((j) => ({ label: basename(j.uri), description: j.jobId, jobId: j.jobId })),
          { placeHolder: 'Which optimization to cancel?' },
        );
        jobId = pick?.jobId;
      }
    }
    if (!jobId) return;
    try {
      await (await host.ready()).cancel(jobId);
    } catch (e) {
      void vscode.window.showErrorMessage(`StitchCUDA: could not cancel job ${jobId}: ${errorText(e)}`);
    }
  });

  reg('stitchcuda.showPlan', () => vscode.commands.executeCommand('stitchcuda.plan.focus'));
  reg('stitchcuda.showLog', () => output.show(true));

  reg('stitchcuda.restartHost', async () => {
    try {
      await host.restart();
      void vscode.window.setStatusBarMessage('StitchCUDA: host restarted', 3000);
    } catch {
      // host.start already told the user
    }
  });

  reg('stitchcuda.setApiKey', async () => {
    const current = currentSettings().brain;
    const brains: { label: string; brain: Exclude<Brain, 'builtin'> }[] = [
      { label: 'OpenAI-compatible endpoint', brain: 'openai' },
      { label: 'Anthropic', brain: 'anthropic' },
    ];
    brains.sort((a) => (a.brain === current ? -1 : 1));
    const pick = await vscode.window.showQuickPick(brains, { placeHolder: 'API key for which brain?' });
    if (!pick) return;
    const key = await vscode.window.showInputBox({
      prompt: `API key for the ${pick.label} brain (kept in VS Code's secret storage; empty removes it)`,
      password: true, ignoreFocusOut: true,
    });
    if (key === undefined) return;
    if (key.trim() === '') await context.secrets.delete(secretKey(pick.brain));
    else await context.secrets.store(secretKey(pick.brain), key.trim());
    output.info(`API key for the ${pick.brain} brain ${key.trim() ? 'stored' : 'removed'}`);
    if (pick.brain === current && host.state !== 'stopped') {
      if (store.running().length === 0) await host.restart().catch(() => undefined);
      else void vscode.window.showInformationMessage('StitchCUDA: the new key is used after "StitchCUDA: Restart host".');
    }
  });

  reg('stitchcuda.openJobLog', async (pathArg?: unknown) => {
    let jobs;
    try {
      jobs = await host.ready();
    } catch {
      return;
    }
    let path = typeof pathArg === 'string' ? pathArg : pathArg instanceof vscode.Uri ? pathArg.fsPath : undefined;
    if (!path) {
      let past: { label: string; description?: string; detail?: string; path?: string }[] = [];
      try {
        past = (await jobs.listJobs())
          .filter((j) => j.logPath)
          .map((j) => ({ label: basename(j.uri) || j.jobId, description: `${jobStateLabel(j.state)} · ${j.startedAt ?? ''}`, detail: j.logPath, path: j.logPath }));
      } catch (e) {
        output.debug(`stitchcuda/listJobs: ${errorText(e)}`);
      }
      // Job logs kept in the workspace (a recorded GPU job committed next to the model).
      const known = new Set(past.map((p) => p.path));
      for (const f of await vscode.workspace.findFiles('**/*.jsonl', '**/node_modules/**', 50)) {
        if (known.has(f.fsPath)) continue;
        past.push({ label: vscode.workspace.asRelativePath(f), description: 'job log in the workspace', path: f.fsPath });
      }
      const browse = { label: '$(folder-opened) Browse for a job log…' };
      const pick = await vscode.window.showQuickPick([...past, browse], { placeHolder: 'Reopen a past StitchCUDA job', matchOnDetail: true });
      if (!pick) return;
      if (pick === browse) {
        const picked = await vscode.window.showOpenDialog({ canSelectMany: false, filters: { 'StitchCUDA job log': ['jsonl'] }, openLabel: 'Open job log' });
        path = picked?.[0]?.fsPath;
      } else {
        path = (pick as { path?: string }).path;
      }
    }
    if (!path) return;
    try {
      const jobId = await jobs.openJobLog(path);
      output.info(`[${jobId}] reopened from ${path}`);
      void vscode.commands.executeCommand('stitchcuda.plan.focus');
      // Show the job's document (its events, sent before the answer, named it).
      const uri = store.get(jobId)?.uri;
      if (uri && !vscode.window.visibleTextEditors.some((e) => e.document.uri.toString() === uri)) {
        try {
          await vscode.window.showTextDocument(vscode.Uri.parse(uri), { preview: false });
        } catch {
          void vscode.window.showWarningMessage(`StitchCUDA: job ${jobId} was made for ${uri}, which is not on this machine.`);
        }
      }
    } catch (e) {
      void vscode.window.showErrorMessage(`StitchCUDA: could not open the job log ${path}: ${errorText(e)}`);
    }
  });

  // Accept is for verified candidates; the lens of any other comes here first and says why.
  reg('stitchcuda.acceptUnverified', async (raw: unknown) => {
    let args;
    try {
      args = parseAcceptUnverifiedArgs(raw);
    } catch (e) {
      void vscode.window.showErrorMessage(`StitchCUDA: cannot accept this candidate: ${errorText(e)}`);
      return;
    }
    const accept = 'Accept anyway';
    const pick = await vscode.window.showWarningMessage(
      `StitchCUDA: candidate ${args.candidateId} is not verified.`,
      { modal: true, detail: `${args.title ? `${args.title}\n\n` : ''}It is not verified: ${unverifiedReason(args.status, args.failedChecks)}. Accepting writes its program beside the model and makes the forward call it.` },
      accept,
    );
    if (pick !== accept) return;
    await vscode.commands.executeCommand('stitchcuda.acceptCandidate', { jobId: args.jobId, candidateId: args.candidateId });
  });

  /**
   * The program of the active model, of `arg` (a model's URI), or of the candidate `arg` names
   * (`{jobId, candidateId}`, from a report's link); saying why when there is none.
   */
  const programOf = async (arg: unknown) => {
    const ref = parseCandidateRef(arg) ?? (arg === undefined ? candidateOfActiveDiff() : undefined);
    if (ref) {
      const job = store.get(ref.jobId);
      const candidate = job?.candidates.find((c) => c.id === ref.candidateId);
      if (!job || !candidate || !candidate.files?.length || !candidate.newText) {
        void vscode.window.showInformationMessage(`StitchCUDA: candidate ${ref.candidateId} of job ${ref.jobId} has no program.`);
        return undefined;
      }
      try {
        return { doc: await vscode.workspace.openTextDocument(vscode.Uri.parse(job.uri)), job, candidate };
      } catch (e) {
        void vscode.window.showErrorMessage(`StitchCUDA: cannot open ${job.uri}: ${errorText(e)}`);
        return undefined;
      }
    }
    const doc = await targetDocument(arg);
    const found = doc && store.programFor(doc.uri.toString());
    if (!doc || !found) {
      void vscode.window.showInformationMessage(
        'StitchCUDA: no candidate of this file has a program yet. Run "Optimize with StitchCUDA" on the model first.');
      return undefined;
    }
    return { doc, ...found };
  };

  // Opens the program's .cu: the copy beside the model once accepted, else the job's own.
  reg('stitchcuda.showGeneratedCuda', async (arg?: unknown) => {
    const p = await programOf(arg);
    const cu = p && cudaFile(p.candidate);
    if (!p || !cu) return;
    const inWorkspace = vscode.Uri.joinPath(p.doc.uri, '..', cu.path);
    let target = vscode.Uri.file(cu.source);
    try {
      if (p.candidate.status === 'accepted') {
        await vscode.workspace.fs.stat(inWorkspace);
        target = inWorkspace;
      }
    } catch {
      // not written beside the model (moved or deleted): the job's copy
    }
    await vscode.window.showTextDocument(target, { preview: true });
  });

  // Writes the program and the model with its edit into a folder the user picks (or `folderArg`), or
  // the one-file KernelBench form (kernelbench.py with ModelNew), as the user picks (or `formArg`;
  // with a folder given and no form: the program).
  reg('stitchcuda.exportProgram', async (arg?: unknown, folderArg?: unknown, formArg?: unknown) => {
    const p = await programOf(arg);
    if (!p) return;
    const model = basename(p.doc.uri.toString());
    let form: ExportForm | undefined = parseExportForm(formArg) ?? (typeof folderArg === 'string' ? 'program' : undefined);
    if (!form) {
      const forms: (vscode.QuickPickItem & { form: ExportForm })[] = [
        { form: 'program', label: 'Program folder and model', description: `${model} + its program folder`,
          detail: 'What Accept writes: the model with its edit, and the .cu with its loader (needs PyTorch and the CUDA toolkit).' },
        { form: 'kernelbench', label: 'KernelBench file', description: KERNELBENCH_FILE,
          detail: 'One file defining ModelNew: the CUDA source inlined and built with load_inline, for any KernelBench evaluation.' },
      ];
      const pick = await vscode.window.showQuickPick(forms, {
        title: `Export the optimized ${model} (candidate ${p.candidate.id}, ${p.candidate.status})`, placeHolder: 'Export as…',
      });
      form = pick?.form;
    }
    if (!form) return;
    let folder = typeof folderArg === 'string' ? vscode.Uri.file(folderArg) : undefined;
    if (!folder) {
      const picked = await vscode.window.showOpenDialog({
        canSelectFolders: true, canSelectFiles: false, canSelectMany: false, openLabel: 'Export here',
        title: form === 'kernelbench'
          ? `Folder for ${KERNELBENCH_FILE} (the KernelBench form of candidate ${p.candidate.id}, ${p.candidate.status})`
          : `Export the optimized ${model} (candidate ${p.candidate.id}, ${p.candidate.status})`,
      });
      folder = picked?.[0];
    }
    if (!folder) return;
    let written: vscode.Uri;
    try {
      if (form === 'kernelbench') {
        written = await exportKernelBench(p.candidate, p.doc.uri, folder);
      } else {
        for (const e of exportEntries(p.candidate, model, p.doc.getText())) {
          const bytes = 'text' in e ? new TextEncoder().encode(e.text) : await vscode.workspace.fs.readFile(vscode.Uri.file(e.source));
          await vscode.workspace.fs.writeFile(vscode.Uri.joinPath(folder, e.path), bytes);
        }
        written = folder;
      }
    } catch (e) {
      if (e instanceof Handled) return;
      void vscode.window.showErrorMessage(`StitchCUDA: could not export the program: ${errorText(e)}`);
      return;
    }
    output.info(`[${p.job.jobId}] exported candidate ${p.candidate.id} (${p.candidate.status}) ${form === 'kernelbench' ? 'as KernelBench file ' : 'to '}${written.fsPath}`);
    if (form === 'kernelbench') {
      const open = 'Open';
      void vscode.window.showInformationMessage(`StitchCUDA: wrote the KernelBench form of ${model} to ${written.fsPath}.`, open).then((pick) => {
        if (pick === open) void vscode.window.showTextDocument(written);
      });
    } else {
      void vscode.window.showInformationMessage(`StitchCUDA: exported the optimized ${model} to ${folder.fsPath}.`);
    }
  });

  /**
   * Writes `<folder>/kernelbench.py` with the harness's KernelBench export (HARNESS.md, `python -m
   * stitchcuda_harness export`), run with the host's interpreter. The host's editor protocol has no
   * request for it, so the extension runs the harness it ships (or the one beside the host binary).
   */
  async function exportKernelBench(candidate: Candidate, model: vscode.Uri, folder: vscode.Uri): Promise<vscode.Uri> {
    const dir = candidateDir(candidate);
    if (!dir) throw new Error(`the host did not say where candidate ${candidate.id}'s files are`);
    const harness = host.harnessDir();
    if (!harness) throw new Error('the StitchCUDA harness (stitchcuda_harness) was found neither in the extension nor above the host binary');
    const python = host.interpreter ?? await host.interpreters.resolve(model);
    const out = vscode.Uri.joinPath(folder, KERNELBENCH_FILE);
    const spec = kernelbenchExportProcess(python.path, harness, dir, out.fsPath, process.env);
    output.info(`KernelBench export: ${spec.command} ${spec.args.join(' ')}`);
    const failure = await new Promise<string | undefined>((resolve) => {
      execFile(spec.command, spec.args, { env: spec.env, timeout: 180000, maxBuffer: 16 << 20 }, (error, _stdout, stderr) => {
        if (!error) return resolve(undefined);
        const tail = String(stderr).trim().split('\n').slice(-3).join(' ').trim();
        resolve(tail || error.message);
      });
    });
    if (failure !== undefined) {
      const problem = interpreterProblem(failure) ?? (/ENOENT/.test(failure) ? 'notRunnable' : undefined);
      if (problem) {
        void host.interpreters.showProblem(problem, python, failure);
        throw new Handled();
      }
      throw new Error(failure);
    }
    return out;
  }

  reg('stitchcuda.revealTask', async (uri: string, range?: Range) => {
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(uri));
    if (!range) {
      await vscode.window.showTextDocument(doc);
      return;
    }
    const r = new vscode.Range(range.start.line, range.start.character, range.end.line, range.end.character);
    await vscode.window.showTextDocument(doc, { selection: new vscode.Range(r.start, r.start), preserveFocus: false });
    vscode.window.activeTextEditor?.revealRange(r, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  });
}
