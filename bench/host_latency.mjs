// Host latency and memory: hover round-trips on an open 5,000-line document whose job has a
// profile on every line, then 10,000 pipelined small requests; p50/p99 latency, idle and
// peak RSS. Prints a table and writes host_latency.{json,md} into --out.
// Targets (issue): hover p99 under 2 ms, idle RSS under 50 MB.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir, cpus, loadavg } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import * as rpc from 'vscode-jsonrpc/node.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const binary = process.env.STITCHCUDA_BIN ?? join(root, 'build', 'bin', 'stitchcuda');
const outDir = process.argv.includes('--out') ? process.argv[process.argv.indexOf('--out') + 1] : join(root, 'bench', 'results');
const LINES = 5000, HOVERS = 2000, PIPELINED = 10000;

const rssKb = (pid, field) => Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`${field}:\\s+(\\d+)`))[1]);
const quantile = (xs, q) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(q * s.length))]; };

const jobsDir = mkdtempSync(join(tmpdir(), 'stitch-bench-'));
const uri = 'file:///bench/model.py';
// A finished job with a profile on every line of the document: the worst case for hover.
const log = join(jobsDir, 'bench.jsonl');
const lines = Array.from({ length: LINES }, (_, i) => ({ line: i, gpuTimeUs: 10 + (i % 97), share: 1 / LINES, bound: 'memory',
  achievedPct: 70, topStall: 'long scoreboard', kernels: [`kernel_${i % 13}`], inlineText: '' }));
writeFileSync(log, [
  { method: 'stitchcuda/profile', params: { jobId: 'bench', uri, subject: 'reference', timeKind: 'gpu', totalGpuTimeUs: 1e5, lines } },
  { method: 'stitchcuda/jobFinished', params: { jobId: 'bench', state: 'noImprovement', message: '' } },
].map((r) => JSON.stringify({ time: '2026-11-22T00:00:00.000Z', ...r })).join('\n') + '\n');

const child = spawn(binary, ['serve', '--jobs-dir', jobsDir, '--log-level', 'error'], { stdio: ['pipe', 'pipe', 'inherit'] });
const connection = rpc.createMessageConnection(new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));
connection.onNotification(() => {});
connection.listen();
await connection.sendRequest('initialize', { processId: process.pid, rootUri: null, capabilities: {} });
await connection.sendNotification('initialized', {});
await new Promise((r) => setTimeout(r, 200));
const idleRssMb = rssKb(child.pid, 'VmRSS') / 1024;

const text = Array.from({ length: LINES }, (_, i) => `        y${i} = torch.relu(x${i}) * 2.0  # line ${i}`).join('\n');
await connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text } });
await connection.sendRequest('stitchcuda/openJobLog', { path: log });

// Each hover is paired with a request that does almost nothing (listJobs) under the same
// conditions: the pair separates the hover's own cost from the round-trip's (pipes, scheduling,
// the client's event loop), which on a small VM owns the tail.
const hover = [];
const control = [];
for (let i = 0; i < HOVERS; ++i) {
  let t0 = performance.now();
  const r = await connection.sendRequest('textDocument/hover', { textDocument: { uri }, position: { line: (i * 7919) % LINES, character: 4 } });
  hover.push(performance.now() - t0);
  if (!r) throw new Error('hover without content');
  t0 = performance.now();
  await connection.sendRequest('stitchcuda/listJobs', {});
  control.push(performance.now() - t0);
}

const sent = new Array(PIPELINED);
const done = new Array(PIPELINED);
const t0 = performance.now();
await Promise.all(Array.from({ length: PIPELINED }, (_, i) => {
  sent[i] = performance.now();
  return connection.sendRequest('textDocument/codeLens', { textDocument: { uri } }).then(() => { done[i] = performance.now(); });
}));
const pipelinedTotal = performance.now() - t0;
const pipelined = done.map((d, i) => d - sent[i]);
const peakRssMb = rssKb(child.pid, 'VmHWM') / 1024;

await connection.sendRequest('shutdown');
await connection.sendNotification('exit');
await new Promise((r) => child.on('exit', r));
connection.dispose();

const result = {
  date: new Date().toISOString(), machine: `${cpus().length} × ${cpus()[0].model}`, node: process.version,
  load_average_1m: loadavg()[0],
  command: 'make bench', documentLines: LINES,
  hover: { count: HOVERS, p50_ms: quantile(hover, 0.5), p99_ms: quantile(hover, 0.99), max_ms: Math.max(...hover) },
  control: { count: HOVERS, p50_ms: quantile(control, 0.5), p99_ms: quantile(control, 0.99), max_ms: Math.max(...control) },
  pipelined: { count: PIPELINED, p50_ms: quantile(pipelined, 0.5), p99_ms: quantile(pipelined, 0.99),
    total_ms: pipelinedTotal, per_second: PIPELINED / (pipelinedTotal / 1000) },
  idle_rss_mb: idleRssMb, peak_rss_mb: peakRssMb,
  targets: { hover_p99_ms: 2, idle_rss_mb: 50 },
};
const f = (x) => x.toFixed(3);
const md = `# Host latency and memory

${result.date} · ${result.machine} (load average ${result.load_average_1m.toFixed(2)}) · Node ${result.node} · \`${result.command}\` · document of ${LINES} lines, a profile on every line

| measure | p50 | p99 | other | target |
|---|---|---|---|---|
| hover round-trip (${HOVERS}, one at a time) | ${f(result.hover.p50_ms)} ms | ${f(result.hover.p99_ms)} ms | max ${f(result.hover.max_ms)} ms | p99 < 2 ms |
| listJobs round-trip, paired with each hover (the round-trip's own cost) | ${f(result.control.p50_ms)} ms | ${f(result.control.p99_ms)} ms | max ${f(result.control.max_ms)} ms | — |
| ${PIPELINED} pipelined codeLens requests | ${f(result.pipelined.p50_ms)} ms | ${f(result.pipelined.p99_ms)} ms | ${Math.round(result.pipelined.per_second)} req/s | — |
| idle RSS after initialize | | | ${idleRssMb.toFixed(1)} MB | < 50 MB |
| peak RSS | | | ${peakRssMb.toFixed(1)} MB | — |
`;
mkdirSync(outDir, { recursive: true });
writeFileSync(join(outDir, 'host_latency.json'), JSON.stringify(result, null, 2) + '\n');
writeFileSync(join(outDir, 'host_latency.md'), md);
console.log(md);
