// The processes the e2e test starts, each in its own process group, so that cleanup ends
// exactly them (and their children) by pid — never by name.
import { spawn } from 'node:child_process';
import { createWriteStream, readdirSync, readFileSync } from 'node:fs';

const started = [];

export function start(name, command, args, { env, cwd, logFile } = {}) {
  const child = spawn(command, args, { env, cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const log = logFile ? createWriteStream(logFile) : null;
  child.stdout.on('data', (d) => log?.write(d));
  child.stderr.on('data', (d) => log?.write(d));
  child.on('exit', () => log?.end());
  started.push({ name, child });
  return child;
}

/** Runs a command to completion; rejects with its output when it fails. */
export function run(command, args, { env, cwd, timeoutMs = 120000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    started.push({ name: `${command} ${args[0] ?? ''}`, child });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => killGroup(child.pid), timeoutMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`${command} ${args.join(' ')} exited with ${code ?? signal}:\n${out}`));
    });
  });
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function killGroup(pid, signal = 'SIGTERM') {
  try {
    process.kill(-pid, signal);
  } catch {
    try { process.kill(pid, signal); } catch { /* gone */ }
  }
}

/** Pids of processes whose command line contains `marker` (our unique temp paths). */
export function pidsWithArgument(marker) {
  const pids = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) pids.push(Number(entry));
    } catch { /* exited */ }
  }
  return pids;
}

/** SIGTERM every group we started, wait, then SIGKILL what is left. */
export async function stopAll(extraPids = []) {
  const groups = started.filter((s) => s.child.pid && s.child.exitCode === null && s.child.signalCode === null);
  for (const s of groups) killGroup(s.child.pid);
  for (const pid of extraPids) { try { process.kill(pid, 'SIGTERM'); } catch { /* gone */ } }
  const deadline = Date.now() + 5000;
  const pending = () => [...groups.map((s) => s.child.pid), ...extraPids].filter(alive);
  while (pending().length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  for (const s of groups) if (alive(s.child.pid)) killGroup(s.child.pid, 'SIGKILL');
  for (const pid of extraPids) if (alive(pid)) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
}
