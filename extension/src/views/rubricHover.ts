// Hover over the lines a candidate replaces: its report, the rubric reward (stitchcuda/score,
// protocol/SCORE.md) beside the host's profile hover, with links to the candidate's program (Show
// generated CUDA, Export optimized program). Asked once per candidate and status, then kept:
// scoring compiles the candidate's PTX, about a second.

import * as vscode from 'vscode';
import type { HostClient } from '../hostClient';
import type { JobStore } from '../model/jobStore';
import { ScoreResult, candidateAt, parseScoreResult, rubricMarkdown } from '../model/rubric';
import { programLinks, REPORT_COMMANDS } from '../model/programExport';

/** Markdown whose links may run the report's commands (and nothing else). */
function report(value: string): vscode.MarkdownString {
  const md = new vscode.MarkdownString(value);
  md.isTrusted = { enabledCommands: [...REPORT_COMMANDS] };
  return md;
}

export class RubricHover implements vscode.HoverProvider, vscode.Disposable {
  private readonly scores = new Map<string, Promise<ScoreResult>>();
  private readonly registration: vscode.Disposable;

  constructor(private readonly store: JobStore, private readonly host: HostClient) {
    this.registration = vscode.languages.registerHoverProvider({ language: 'python' }, this);
  }

  async provideHover(doc: vscode.TextDocument, pos: vscode.Position, token: vscode.CancellationToken): Promise<vscode.Hover | undefined> {
    const at = candidateAt(this.store.all(), doc.uri.toString(), pos.line);
    if (!at) return undefined;
    const key = `${at.jobId}/${at.candidate.id}/${at.candidate.status}`;
    let score = this.scores.get(key);
    if (!score) {
      score = this.host.ready().then((jobs) => jobs.score(at.jobId, at.candidate.id)).then(parseScoreResult);
      this.scores.set(key, score);
      score.catch(() => this.scores.delete(key));  // a failure is asked again on the next hover
    }
    // The candidate's report links to its program: "Show generated CUDA" and "Export optimized program".
    const links = programLinks(at.jobId, at.candidate);
    const withLinks = (md: string) => (links ? `**StitchCUDA** · candidate ${at.candidate.id}: ${links}\n\n${md}` : md);
    try {
      const result = await score;
      if (token.isCancellationRequested) return undefined;
      return new vscode.Hover(report(withLinks(rubricMarkdown(at.candidate.id, result))));
    } catch (e) {
      return new vscode.Hover(report(withLinks(`**StitchCUDA rubric** · ${at.candidate.id}: not scored (${e instanceof Error ? e.message : String(e)})`)));
    }
  }

  dispose(): void {
    this.registration.dispose();
  }
}
