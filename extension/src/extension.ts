// Entry point: wires the host client, the job store, the views and the commands.

import * as vscode from 'vscode';
import { HostClient } from './hostClient';
import { defaultResource, Interpreters } from './interpreter';
import { describeInterpreter } from './model/interpreter';
import { JobStore } from './model/jobStore';
import { RESTART_KEYS } from './model/settings';
import { programCudaModel, registerCommands } from './commands';
import { PlanView } from './views/planView';
import { registerCandidateDiff } from './views/candidateDiff';
import { ProfileDecorations } from './views/profileDecorations';
import { RubricHover } from './views/rubricHover';
import { StatusBar } from './views/statusBar';
import { JobDiagnostics } from './views/jobDiagnostics';

let host: HostClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel('StitchCUDA', { log: true });
  const store = new JobStore();
  const interpreters = new Interpreters(output);
  host = new HostClient(context, output, store, interpreters);
  const planView = new PlanView(store);

  // Optimize is offered on a .cu only where it works: a program Accept wrote beside its model.
  const programCuda = () => {
    const doc = vscode.window.activeTextEditor?.document;
    void vscode.commands.executeCommand('setContext', 'stitchcuda.programCuda', !!doc && !!programCudaModel(doc));
  };
  programCuda();
  context.subscriptions.push(vscode.window.onDidChangeActiveTextEditor(programCuda));

  context.subscriptions.push(
    output,
    interpreters,
    planView,
    new JobDiagnostics(store),
    vscode.window.createTreeView('stitchcuda.plan', { treeDataProvider: planView, showCollapseAll: true }),
    new ProfileDecorations(store),
    new RubricHover(store, host),
    new StatusBar(store, host),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!RESTART_KEYS.some((k) => e.affectsConfiguration(k)) || !host || host.state === 'stopped') return;
      if (store.running().length === 0) void host.restart().catch(() => undefined);
      else void vscode.window.showInformationMessage('StitchCUDA: the new settings apply after "StitchCUDA: Restart host".');
    }),
    // The interpreter selected in the Python extension changed: a host running another one
    // restarts with it (when idle; optimizing a file also switches to that file's interpreter).
    interpreters.onDidChange(async () => {
      if (!host || host.state === 'stopped' || !host.interpreter || host.interpreter.source === 'setting') return;
      const wanted = await interpreters.resolve(defaultResource());
      if (!host.interpreter || wanted.path === host.interpreter.path) return;
      if (store.running().length === 0) {
        output.info(`the Python interpreter changed to ${describeInterpreter(wanted)}; restarting the host`);
        void host.restart(undefined, wanted).catch(() => undefined);
      } else {
        void vscode.window.showInformationMessage(`StitchCUDA: the interpreter ${wanted.path} is used after the running job ("StitchCUDA: Restart host", or the next optimization).`);
      }
    }),
  );
  registerCandidateDiff(context, store);
  registerCommands(context, host, store, output);

  // Start the host now so hovers and lenses of past jobs work; a failure is reported, and
  // commands retry.
  void host.start().catch(() => undefined);
}

export async function deactivate(): Promise<void> {
  await host?.dispose();
  host = undefined;
}
