// A job that failed on the user's model (it does not parse, its import, __init__ or forward
// raises, it returns no tensor) puts the harness's error on the model's file and line as a
// diagnostic (the Problems view, a squiggle); the newest job of a file decides, so running it
// again clears them. model/jobDiagnostics.ts reads the host's messages.

import * as vscode from 'vscode';
import { JobStore } from '../model/jobStore';
import { diagnosticsByDocument } from '../model/jobDiagnostics';

export class JobDiagnostics implements vscode.Disposable {
  private readonly collection = vscode.languages.createDiagnosticCollection('stitchcuda');
  private readonly sub: { dispose(): unknown };
  private pending: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly store: JobStore) {
    this.sub = store.onDidChange(() => {
      if (this.pending) return;
      this.pending = setTimeout(() => {
        this.pending = undefined;
        this.update();
      }, 50);
    });
    this.update();
  }

  private update(): void {
    const byDoc = diagnosticsByDocument(this.store.all());
    const stale: vscode.Uri[] = [];
    this.collection.forEach((uri) => {
      if (!byDoc.has(uri.toString())) stale.push(uri);
    });
    for (const uri of stale) this.collection.delete(uri);
    for (const [uri, diags] of byDoc) {
      const target = vscode.Uri.parse(uri);
      const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri);
      this.collection.set(target, diags.map((d) => {
        let range = new vscode.Range(d.line, 0, d.line, Number.MAX_SAFE_INTEGER);
        if (doc && d.line < doc.lineCount) {
          const line = doc.lineAt(d.line);
          range = line.isEmptyOrWhitespace ? line.range : new vscode.Range(d.line, line.firstNonWhitespaceCharacterIndex, d.line, line.range.end.character);
        }
        const diagnostic = new vscode.Diagnostic(range, d.message, vscode.DiagnosticSeverity.Error);
        diagnostic.source = 'StitchCUDA';
        if (d.code) diagnostic.code = d.code;
        return diagnostic;
      }));
    }
  }

  dispose(): void {
    if (this.pending) clearTimeout(this.pending);
    this.sub.dispose();
    this.collection.dispose();
  }
}
