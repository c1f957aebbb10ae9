// Bundles the extension (src/extension.ts → out/extension.js, 'vscode' external) and, with
// --tests, each unit test (tests/extension/unit/*.test.ts → out/test/*.test.js) for node --test.
import * as esbuild from 'esbuild';
import { readdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = new Set(process.argv.slice(2));
const common = { bundle: true, platform: 'node', target: 'node18', format: 'cjs', sourcemap: true, logLevel: 'info' };

if (args.has('--tests')) {
  const dir = join(root, 'tests/extension/unit');
  const entryPoints = readdirSync(dir).filter((f) => f.endsWith('.test.ts')).map((f) => join(dir, f));
  rmSync(join(root, 'out/test'), { recursive: true, force: true });
  // The unit tests load only pure modules: leaving 'vscode' unresolved makes an import of
  // it fail loudly at run time instead of being stubbed.
  await esbuild.build({ ...common, entryPoints, outdir: join(root, 'out/test'), external: ['vscode'] });
} else {
  const options = {
    ...common,
    entryPoints: [join(root, 'extension/src/extension.ts')],
    outfile: join(root, 'out/extension.js'),
    external: ['vscode'],
    minify: args.has('--production'),
    sourcemap: !args.has('--production'),
  };
  if (args.has('--watch')) {
    const ctx = await esbuild.context(options);
    await ctx.watch();
  } else {
    await esbuild.build(options);
  }
}
