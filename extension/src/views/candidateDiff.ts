// The Diff lens: a read-only virtual document with the candidate applied to the current
// text, opened in a diff editor against the original. Nothing is written until Accept.

import * as vscode from 'vscode';
import { CandidateDiffArgs, parseCandidateDiffArgs } from '../model/protocol';
import { applyRangeEdit } from '../model/textEdit';
import { basename } from '../model/format';

export const CANDIDATE_SCHEME = 'stitchcuda-candidate';

export class CandidateDiffProvider implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly candidates = new Map<string, CandidateDiffArgs>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  static virtualUri(args: CandidateDiffArgs): vscode.Uri {
    const original = vscode.Uri.parse(args.uri);
    const query = new URLSearchParams({ job: args.jobId, candidate: args.candidateId }).toString();
    return vscode.Uri.from({ scheme: CANDIDATE_SCHEME, path: original.path, query });
  }

  remember(args: CandidateDiffArgs): vscode.Uri {
    this.candidates.set(`${args.jobId}/${args.candidateId}`, args);
    const uri = CandidateDiffProvider.virtualUri(args);
    this.changed.fire(uri);
    return uri;
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const q = new URLSearchParams(uri.query);
    const args = this.candidates.get(`${q.get('job')}/${q.get('candidate')}`);
    if (!args) return `// StitchCUDA: candidate ${q.get('candidate')} of job ${q.get('job')} is no longer known.\n`;
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(args.uri));
    return applyRangeEdit(doc.getText(), args.range, args.newText);
  }

  dispose(): void {
    this.changed.dispose();
  }
}

export function registerCandidateDiff(context: vscode.ExtensionContext): CandidateDiffProvider {
  const provider = new CandidateDiffProvider();
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
      const right = provider.remember(args);
      const title = `${basename(args.uri)} ↔ candidate ${args.candidateId} (StitchCUDA)`;
      const line = Math.max(0, args.range.start.line);
      await vscode.commands.executeCommand('vscode.diff', vscode.Uri.parse(args.uri), right, title, {
        preview: true, selection: new vscode.Range(line, 0, line, 0),
      });
    }),
  );
  return provider;
}
