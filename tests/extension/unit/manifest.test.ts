// Pins the manifest against the code: every contributed command is registered by the
// extension (or runs on the host), every registered command is contributed, and every
// setting the code reads is declared with a default.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

const repo = resolve(__dirname, '../..');
const manifest = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8'));
const sources: string[] = [];
const walk = (d: string) => {
  for (const f of readdirSync(d)) {
    const p = join(d, f);
    if (statSync(p).isDirectory()) walk(p);
    else if (p.endsWith('.ts')) sources.push(readFileSync(p, 'utf8'));
  }
};
walk(join(repo, 'extension/src'));
const code = sources.join('\n');

test('contributed and registered commands are the same set', () => {
  const registered = new Set([...code.matchAll(/(?:registerCommand|reg)\(\s*'(stitchcuda\.[A-Za-z]+)'/g)].map((m) => m[1]));
  const contributed = new Set<string>(manifest.contributes.commands.map((c: { command: string }) => c.command));
  assert.ok(registered.size >= 8);
  for (const c of registered) assert.ok(contributed.has(c), `${c} is registered but not contributed`);
  for (const c of contributed) assert.ok(registered.has(c), `${c} is contributed but nothing registers it`);
  for (const menu of Object.values(manifest.contributes.menus) as { command: string }[][]) {
    for (const item of menu) assert.ok(contributed.has(item.command), `menu item ${item.command} is not a contributed command`);
  }
});

test('every setting the code reads is declared with a default', () => {
  const declared = manifest.contributes.configuration.properties as Record<string, { default?: unknown }>;
  // readSettings reads through s('key') / n('key') / get('key'); views read getConfiguration('stitchcuda').get<T>('key').
  const settingsSrc = readFileSync(join(repo, 'extension/src/model/settings.ts'), 'utf8');
  const read = new Set([...settingsSrc.matchAll(/\b(?:s|n|get)\('([a-zA-Z.]+)'\)/g)].map((m) => m[1]));
  for (const m of code.matchAll(/getConfiguration\('stitchcuda'\)\.get<[^>]+>\('([a-zA-Z.]+)'/g)) read.add(m[1]);
  assert.ok(read.size >= 8, `found ${[...read].join(', ')}`);
  for (const key of read) {
    const full = `stitchcuda.${key}`;
    assert.ok(full in declared, `${full} is read but not declared`);
    assert.ok('default' in declared[full], `${full} has no default`);
  }
  assert.equal(declared['stitchcuda.brain'].default, 'builtin', 'the built-in brain is the default');
  assert.ok(!Object.keys(declared).some((k) => /key|token|secret/i.test(k)), 'no API key in settings');
});

test('the extension activates on its view (and, implicitly, its commands), not on every Python file, and ships out/extension.js', () => {
  assert.equal(manifest.main, './out/extension.js');
  assert.deepEqual(manifest.activationEvents, ['onView:stitchcuda.plan']);
  assert.ok(manifest.engines.vscode.replace(/^\^/, '') >= '1.74', 'commands activate implicitly from VS Code 1.74');
  assert.equal(manifest.scripts['test:protocol'], 'node --test tests/node/');
  assert.ok(manifest.devDependencies['vscode-jsonrpc']);
});

// What the Extensions view shows (extension/package.mjs stages it): the user's README names every
// setting and every command, so that neither is added without being documented there.
test('the marketplace README documents every setting and command; the icon, changelog and licence exist', () => {
  const readme = readFileSync(join(repo, 'extension/marketplace/README.md'), 'utf8');
  for (const key of Object.keys(manifest.contributes.configuration.properties)) {
    assert.ok(readme.includes(`\`${key}\``), `${key} is not in extension/marketplace/README.md`);
  }
  for (const c of manifest.contributes.commands as { title: string }[]) {
    assert.ok(readme.includes(c.title), `command "${c.title}" is not in extension/marketplace/README.md`);
  }
  assert.ok(statSync(join(repo, manifest.icon)).size > 0, 'package.json icon');
  for (const f of ['extension/marketplace/CHANGELOG.md', 'extension/marketplace/screenshot.png', 'LICENSE']) {
    assert.ok(statSync(join(repo, f)).size > 0, f);
  }
  assert.equal(manifest.license, 'MIT');
});
