// The rubric reward of a candidate (stitchcuda/score, protocol/SCORE.md) as the hover shows it:
// parsing the host's answer, finding the candidate under the cursor, and the Markdown table.
// Pure: no 'vscode' import.

import type { JobView } from './jobStore';
import type { Candidate } from './protocol';

export interface Dimension { score: number | null; evidence: string[] }
export interface ScoreResult {
  reward: number | null;
  skill: string;
  verdictStatus: string;
  rule: Dimension & { correct?: boolean; speedupVsEager?: number | null };
  antiHacking: Dimension & { failed: string[]; passed: number };
  cudaEngineering: Dimension & { techniques: string[]; read: string };
  operatorCoverage: Dimension;
  skillCompliance: Dimension;
}

const DIMENSIONS = ['anti_hacking', 'cuda_engineering', 'operator_coverage', 'skill_compliance'] as const;

function fail(what: string): never {
  throw new Error(`stitchcuda/score: ${what}`);
}

function scoreOf(v: unknown, where: string): number | null {
  if (v === null || typeof v === 'number') return v;
  return fail(`${where}.score is neither a number nor null`);
}

function evidenceOf(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((e): e is string => typeof e === 'string') : [];
}

/** Checks the shape the hover reads; throws naming the first field that does not fit. */
export function parseScoreResult(raw: any): ScoreResult {
  if (!raw || raw.schema !== 'stitchcuda.score/1') fail('the answer is not stitchcuda.score/1');
  const rubric = raw.rubric ?? fail('no rubric');
  for (const d of DIMENSIONS) if (!rubric[d]) fail(`no rubric.${d}`);
  const checks: Record<string, string> = rubric.anti_hacking.checks ?? {};
  const features: Record<string, { present?: boolean }> = rubric.cuda_engineering.features ?? {};
  return {
    reward: scoreOf(raw.reward, 'reward'),
    skill: String(raw.skill ?? ''),
    verdictStatus: String(raw.verdictStatus ?? ''),
    rule: { score: scoreOf(raw.rule?.score, 'rule'), evidence: evidenceOf(raw.rule?.evidence), correct: raw.rule?.correct,
      speedupVsEager: raw.rule?.speedupVsEager },
    antiHacking: {
      score: scoreOf(rubric.anti_hacking.score, 'anti_hacking'),
      evidence: (rubric.anti_hacking.findings ?? []).map((f: any) => `${f.check}: ${f.message}`),
      failed: Object.keys(checks).filter((k) => checks[k] === 'failed'),
      passed: Object.values(checks).filter((v) => v.startsWith('passed')).length,
    },
    cudaEngineering: {
      score: scoreOf(rubric.cuda_engineering.score, 'cuda_engineering'),
      evidence: [],
      techniques: Object.keys(features).filter((k) => features[k].present),
      read: String(rubric.cuda_engineering.compiled?.read ?? 'source'),
    },
    operatorCoverage: { score: scoreOf(rubric.operator_coverage.score, 'operator_coverage'), evidence: evidenceOf(rubric.operator_coverage.evidence) },
    skillCompliance: { score: scoreOf(rubric.skill_compliance.score, 'skill_compliance'), evidence: evidenceOf(rubric.skill_compliance.evidence) },
  };
}

/** The candidate whose edit covers `line` (zero-based) in `uri`: the job's best, else its latest; rejected ones never. */
export function candidateAt(jobs: JobView[], uri: string, line: number): { jobId: string; candidate: Candidate } | undefined {
  for (const job of [...jobs].sort((a, b) => b.startedOrder - a.startedOrder)) {
    if (job.uri !== uri) continue;
    const here = job.candidates.filter((c) => c.status !== 'rejected' && c.range.start.line <= line && line <= c.range.end.line);
    const pick = here.find((c) => c.id === job.bestCandidateId) ?? here[here.length - 1];
    if (pick) return { jobId: job.jobId, candidate: pick };
  }
  return undefined;
}

const number = (x: number | null): string => (x === null ? '—' : String(Math.round(x * 100) / 100));
const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

export function rubricMarkdown(candidateId: string, r: ScoreResult): string {
  const hacked = r.antiHacking.failed.length > 0;
  const rows: [string, number | null, string][] = [
    ['rule: compiled, correct, speed', r.rule.score, r.rule.evidence.join('; ')],
    ['anti-hacking', r.antiHacking.score,
      hacked ? `failed: ${r.antiHacking.failed.join(', ')}` : `${r.antiHacking.passed} guards passed`],
    ['CUDA engineering', r.cudaEngineering.score,
      `${r.cudaEngineering.techniques.join(', ') || 'no technique seen'} (read from ${r.cudaEngineering.read})`],
    ['operator coverage', r.operatorCoverage.score, r.operatorCoverage.evidence.join('; ')],
    ['skill compliance', r.skillCompliance.score, r.skillCompliance.evidence.join('; ')],
  ];
  const reward = r.reward === null ? 'not judged' : number(r.reward);
  return [
    `**StitchCUDA rubric** · ${candidateId} · reward ${reward}${hacked ? ' (a guard failed: reward 0)' : ''}`,
    '',
    '| | score | evidence |',
    '|---|---|---|',
    ...rows.map(([name, score, evidence]) => `| ${name} | ${number(score)} | ${cell(evidence)} |`),
    '',
  ].join('\n');
}
