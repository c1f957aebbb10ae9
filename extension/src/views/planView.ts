// The "Plan" tree view: jobs, the Planner's tasks as they stream in, and each task's
// candidates with their verified status; refreshed through an event emitter on store changes.

import * as vscode from 'vscode';
import { JobStore } from '../model/jobStore';
import { NodeIcon, PlanNode, planRoots } from '../model/planTree';

const ICONS: Record<NodeIcon, [string, string?]> = {
  'job-running': ['sync~spin'],
  'job-improved': ['pass-filled', 'testing.iconPassed'],
  'job-done': ['circle-large-outline'],
  'job-failed': ['error', 'testing.iconFailed'],
  'task-pending': ['circle-outline'],
  'task-active': ['loading~spin'],
  'task-done': ['check'],
  'task-skipped': ['dash'],
  'candidate-verified': ['verified-filled', 'testing.iconPassed'],
  'candidate-unverified': ['unverified', 'list.warningForeground'],
  'candidate-failed': ['close', 'testing.iconFailed'],
  'candidate-accepted': ['check-all', 'testing.iconPassed'],
  'candidate-rejected': ['circle-slash', 'disabledForeground'],
  uncovered: ['symbol-misc'],
};

export class PlanView implements vscode.TreeDataProvider<PlanNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<PlanNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly sub: { dispose(): unknown };
  private roots: PlanNode[] = [];
  private pending: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly store: JobStore) {
    this.roots = planRoots(store.all());
    // Coalesce bursts of events (a replayed log sends many at once).
    this.sub = store.onDidChange(() => {
      if (this.pending) return;
      this.pending = setTimeout(() => {
        this.pending = undefined;
        this.roots = planRoots(this.store.all());
        this.changed.fire(undefined);
      }, 50);
    });
  }

  getTreeItem(node: PlanNode): vscode.TreeItem {
    const collapsible = node.children.length === 0
      ? vscode.TreeItemCollapsibleState.None
      : vscode.TreeItemCollapsibleState.Expanded;
    const item = new vscode.TreeItem(node.label, collapsible);
    // VS Code keeps the collapse state per id: a node that gains children (a task that gets
    // its first candidate) takes a new id, so it opens expanded instead of collapsed.
    item.id = node.children.length ? node.id : `${node.id}#leaf`;
    item.description = node.description;
    item.tooltip = node.tooltip;
    item.contextValue = node.contextValue;
    const [icon, color] = ICONS[node.icon];
    item.iconPath = new vscode.ThemeIcon(icon, color ? new vscode.ThemeColor(color) : undefined);
    if (node.uri) {
      item.command = { command: 'stitchcuda.revealTask', title: 'Reveal', arguments: [node.uri, node.range] };
    }
    return item;
  }

  getChildren(node?: PlanNode): PlanNode[] {
    return node ? node.children : this.roots;
  }

  getParent(): undefined {
    return undefined;
  }

  dispose(): void {
    if (this.pending) clearTimeout(this.pending);
    this.sub.dispose();
    this.changed.dispose();
  }
}
