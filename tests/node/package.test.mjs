// The README's recipe for the .vsix works from a fresh checkout: `npm run package` in a copy of the
// repository without node_modules installs its tools from the lockfile, then packs the extension.
// npm prefers its cache (filled by `make setup`), so this needs the registry only on a cold cache.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

test('npm run package on a checkout without node_modules installs what it needs and writes the .vsix', { timeout: 300000 }, () => {
  const checkout = mkdtempSync(join(tmpdir(), 'stitchcuda-package-'));
  try {
    for (const p of ['package.json', 'package-lock.json', 'LICENSE', 'extension', 'harness']) {
      cpSync(join(root, p), join(checkout, p), { recursive: true });
    }
    assert.ok(!existsSync(join(checkout, 'node_modules')));
    const said = execFileSync('npm', ['run', 'package', '--', '--allow-missing-host'], {
      cwd: checkout, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, npm_config_prefer_offline: 'true', npm_config_update_notifier: 'false' },
    });
    assert.match(said, /installing the npm packages of package-lock\.json/);
    assert.ok(existsSync(join(checkout, 'out/stitchcuda-linux-x64.vsix')), said);
  } finally {
    rmSync(checkout, { recursive: true, force: true });
  }
});
