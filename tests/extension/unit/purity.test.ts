// The modules under extension/src/model/ are the unit-tested logic: they must not import
// 'vscode' (nor anything that does), or node --test could not load them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const modelDir = resolve(__dirname, '../../extension/src/model');

test('extension/src/model imports neither vscode nor the vscode-bound folders', () => {
  const files = readdirSync(modelDir).filter((f) => f.endsWith('.ts'));
  assert.ok(files.length >= 5, `expected the model modules in ${modelDir}`);
  for (const f of files) {
    const src = readFileSync(join(modelDir, f), 'utf8');
    const imports = [...src.matchAll(/from\s+'([^']+)'/g)].map((m) => m[1]);
    for (const i of imports) {
      assert.ok(i.startsWith('./'), `${f} imports ${i}: model modules may import only each other`);
    }
  }
});
