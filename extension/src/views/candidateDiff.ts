// The Diff lens: read-only virtual documents with the candidate applied to the current text and,
// for a candidate with a program, the files Accept adds beside the model, opened against what is
// there now (one diff editor, or the multi-file changes editor). Nothing is written until Accept.

import * as vscode from 'vscode';
import * as fs from 'fs';
import { CandidateDiffArgs, parseCandidateDiffArgs } from '../model/protocol';
import { applyRangeEdit } from '../model/textEdit';
import { basename } from '../model/format';
import { CANDIDATE_SCHEME, DiffDocument, diffQuery, diffRows, parseDiffQuery } from '../model/candidateDiff';
import { JobStore } from '../model/jobStore';

export class CandidateDiffProvider implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly candidates = new Map<string, CandidateDiffArgs>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  constructor(private readonly store: JobStore) {}

  static virtualUri(path: string, d: DiffDocument): vscode.Uri {
    return vscode.Uri.from({ scheme: CANDIDATE_SCHEME, path, query: diffQuery(d) });
  }

  remember(args: CandidateDiffArgs): vscode.Uri {
    this.candidates.set(`${args.jobId}/${args.candidateId}`, args);
    const uri = CandidateDiffProvider.virtualUri(vscode.Uri.parse(args.uri).path, args);
    this.changed.fire(uri);
    return uri;
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const d = parseDiffQuery(uri.query);
    const args = d && this.candidates.get(`${d.jobId}/${d.candidateId}`);
    if (!d || !args) return `// StitchCUDA: this candidate is no longer known.\n`;
    if (d.file) {
      const file = this.store.get(d.jobId)?.candidates.find((c) => c.id === d.candidateId)?.files?.find((f) => f.path === d.file);
      if (!file) return `// StitchCUDA: candidate ${d.candidateId} has no file ${d.file}.\n`;
      return new TextDecoder().decode(await vscode.workspace.fs.readFile(vscode.Uri.file(file.source)));
    }
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(args.uri));
    return applyRangeEdit(doc.getText(), args.range, args.newText);
  }

  dispose(): void {
    this.changed.dispose();
  }
}

export function registerCandidateDiff(context: vscode.ExtensionContext, store: JobStore): CandidateDiffProvider {
  const provider = new CandidateDiffProvider(store);
  context.subscriptions.push(
    provider,
    vscode.workspace.registerTextDocumentContentProvider(CANDIDATE_SCHEME, provider),
    vscode.commands.registerCommand('stitchcuda.showCandidateDiff', async (raw: unknown) => {
      let args: CandidateDiffArgs;
      try {
        args = parseCandidateDiffArgs(raw);
      } catch (e) {
        void vscode.window.showErrorMessage(`StitchCUDA: cannot show this diff: ${e instanceof Error ? e.message : String(e)}`);
        return;
      }
      const model = vscode.Uri.parse(args.uri);
      const right = provider.remember(args);
      const title = `${basename(args.uri)} ↔ candidate ${args.candidateId} (StitchCUDA)`;
      const candidate = store.get(args.jobId)?.candidates.find((c) => c.id === args.candidateId);
      if (!candidate?.files?.length || model.scheme !== 'file') {
        const line = Math.max(0, args.range.start.line);
        await vscode.commands.executeCommand('vscode.diff', model, right, title, {
          preview: true, selection: new vscode.Range(line, 0, line, 0),
        });
        return;
      }
      // The model's edit and the program Accept writes beside it, in one changes editor.
      const rows = diffRows(args.jobId, candidate, model.fsPath, (p) => fs.existsSync(p)).map((r, i) => {
        const target = i === 0 ? model : vscode.Uri.file(r.target);
        const after = i === 0 ? right : CandidateDiffProvider.virtualUri(target.path, r.document);
        return [target, r.existsNow ? target : undefined, after];
      });
      await vscode.commands.executeCommand('vscode.changes', title, rows);
    }),
  );
  return provider;
}
