// The status-bar item: host state, else the newest job's state and speedup; clicking it
// shows the plan (the log when the host is down, the interpreter setting when it lacks PyTorch).

import * as vscode from 'vscode';
import { JobStore } from '../model/jobStore';
import { statusBarModel } from '../model/format';
import { HostClient } from '../hostClient';

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('stitchcuda.status', vscode.StatusBarAlignment.Left, 10);
  private readonly subs: { dispose(): unknown }[] = [];

  constructor(private readonly store: JobStore, private readonly host: HostClient) {
    this.item.name = 'StitchCUDA';
    this.subs.push(store.onDidChange(() => this.update()), host.onDidChangeState(() => this.update()));
    this.update();
    this.item.show();
  }

  private update(): void {
    const m = statusBarModel(this.host.state, this.store.all());
    this.item.text = m.text;
    this.item.tooltip = m.tooltip;
    this.item.command = { title: 'StitchCUDA', ...m.command };
    void vscode.commands.executeCommand('setContext', 'stitchcuda.jobRunning', this.store.running().length > 0);
  }

  dispose(): void {
    for (const s of this.subs) s.dispose();
    this.item.dispose();
  }
}
