// Entry point: wires the host client, the job store, the views and the commands.

import * as vscode from 'vscode';
import { HostClient } from './hostClient';
import { JobStore } from './model/jobStore';
import { RESTART_KEYS } from './model/settings';
import { registerCommands } from './commands';
import { PlanView } from './views/planView';
import { registerCandidateDiff } from './views/candidateDiff';
import { ProfileDecorations } from './views/profileDecorations';
import { RubricHover } from './views/rubricHover';
import { StatusBar } from './views/statusBar';

let host: HostClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel('StitchCUDA', { log: true });
  const store = new JobStore();
  host = new HostClient(context, output, store);
  const planView = new PlanView(store);

  context.subscriptions.push(
    output,
    planView,
    vscode.window.createTreeView('stitchcuda.plan', { treeDataProvider: planView, showCollapseAll: true }),
    new ProfileDecorations(store),
    new RubricHover(store, host),
    new StatusBar(store, host),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!RESTART_KEYS.some((k) => e.affectsConfiguration(k)) || !host || host.state === 'stopped') return;
      if (store.running().length === 0) void host.restart().catch(() => undefined);
      else void vscode.window.showInformationMessage('StitchCUDA: the new settings apply after "StitchCUDA: Restart host".');
    }),
  );
  registerCandidateDiff(context);
  registerCommands(context, host, store, output);

  // Start the host now so hovers and lenses of past jobs work; a failure is reported, and
  // commands retry.
  void host.start().catch(() => undefined);
}

export async function deactivate(): Promise<void> {
  await host?.dispose();
  host = undefined;
}
