// End-of-line profile text from stitchcuda/profile on the hottest lines of each visible
// editor. One decoration type, created once, disposed with the extension.

import * as vscode from 'vscode';
import { JobStore } from '../model/jobStore';
import { profileDecorations } from '../model/format';

export class ProfileDecorations implements vscode.Disposable {
  private readonly type = vscode.window.createTextEditorDecorationType({
    after: {
      margin: '0 0 0 2em',
      color: new vscode.ThemeColor('editorCodeLens.foreground'),
      fontStyle: 'italic',
    },
    rangeBehavior: vscode.DecorationRangeBehavior.ClosedClosed,
  });
  private readonly subs: { dispose(): unknown }[] = [];
  /** The text each profile was first shown on: its lines mean nothing once the text differs. */
  private readonly profiledText = new Map<string, string>();

  constructor(private readonly store: JobStore) {
    this.subs.push(
      store.onDidChange(() => this.renderAll()),
      vscode.window.onDidChangeVisibleTextEditors(() => this.renderAll()),
      // Profile lines are the host's line numbers for the profiled text: hide the texts while
      // the document differs from it, and put them back on their lines when it is undone.
      vscode.workspace.onDidChangeTextDocument((e) => {
        for (const editor of vscode.window.visibleTextEditors) if (editor.document === e.document) this.render(editor);
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('stitchcuda.profile.inlineText')) this.renderAll();
      }),
    );
    this.renderAll();
  }

  private renderAll(): void {
    for (const editor of vscode.window.visibleTextEditors) this.render(editor);
  }

  private render(editor: vscode.TextEditor): void {
    const enabled = vscode.workspace.getConfiguration('stitchcuda').get<boolean>('profile.inlineText', true);
    const profile = enabled ? this.store.profileFor(editor.document.uri.toString()) : undefined;
    if (!profile) {
      editor.setDecorations(this.type, []);
      return;
    }
    const doc = editor.document;
    const key = `${profile.jobId}\u0000${profile.subject}\u0000${profile.uri}`;
    const text = doc.getText();
    if (!this.profiledText.has(key)) this.profiledText.set(key, text);
    if (this.profiledText.get(key) !== text) {
      editor.setDecorations(this.type, []); // edited since (e.g. a candidate accepted): hide until undone
      return;
    }
    const options: vscode.DecorationOptions[] = profileDecorations(profile)
      .filter((d) => d.line >= 0 && d.line < doc.lineCount)
      .map((d) => {
        const end = doc.lineAt(d.line).range.end;
        return { range: new vscode.Range(end, end), renderOptions: { after: { contentText: `  ${d.text}` } } };
      });
    editor.setDecorations(this.type, options);
  }

  dispose(): void {
    for (const s of this.subs) s.dispose();
    this.type.dispose();
  }
}
