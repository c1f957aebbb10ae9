// `npm run package`: builds the production bundle, stages the extension with the host
// binary (bin/linux-x64/stitchcuda) and the Python harness, and packs a linux-x64 .vsix
// with @vscode/vsce. Usage: node extension/package.mjs [--host PATH] [--out FILE]
//   [--allow-missing-host]   (a .vsix without a host, which then needs stitchcuda.hostPath)
// On a fresh checkout it first installs its tools (esbuild, vsce) from the lockfile with `npm ci`.
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = argv.indexOf(name);
  return i >= 0 && argv[i + 1] ? argv[i + 1] : fallback;
};
const host = resolve(root, opt('--host', process.env.STITCHCUDA_HOST_BINARY || 'build/bin/stitchcuda'));
const out = resolve(root, opt('--out', 'out/stitchcuda-linux-x64.vsix'));
const stage = join(root, 'out/vsix-stage');

// The npm packages this script runs: a checkout without node_modules gets them, as `make setup` would.
if (!['esbuild/package.json', '@vscode/vsce/vsce'].every((p) => existsSync(join(root, 'node_modules', p)))) {
  console.log('package: installing the npm packages of package-lock.json (npm ci)');
  // Under `npm run`, npm_execpath is the npm that runs us; else npm on PATH.
  const npm = process.env.npm_execpath ? [process.execPath, [process.env.npm_execpath]] : ['npm', []];
  execFileSync(npm[0], [...npm[1], 'ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: root, stdio: 'inherit' });
}

execFileSync(process.execPath, [join(root, 'extension/esbuild.mjs'), '--production'], { stdio: 'inherit' });

rmSync(stage, { recursive: true, force: true });
mkdirSync(join(stage, 'out'), { recursive: true });
copyFileSync(join(root, 'out/extension.js'), join(stage, 'out/extension.js'));
// What the Extensions view shows: the user's README (not extension/README.md, which is for the
// next engineer), its screenshot, the changelog, the licence and the icon (package.json's `icon`).
for (const file of ['README.md', 'CHANGELOG.md', 'screenshot.png']) {
  copyFileSync(join(root, 'extension/marketplace', file), join(stage, file));
}
copyFileSync(join(root, 'LICENSE'), join(stage, 'LICENSE'));
mkdirSync(join(stage, 'extension/marketplace'), { recursive: true });
copyFileSync(join(root, 'extension/marketplace/icon.png'), join(stage, 'extension/marketplace/icon.png'));

if (existsSync(host)) {
  mkdirSync(join(stage, 'bin/linux-x64'), { recursive: true });
  copyFileSync(host, join(stage, 'bin/linux-x64/stitchcuda'));
  chmodSync(join(stage, 'bin/linux-x64/stitchcuda'), 0o755);
  // Debug info stays in build/; the package ships a stripped copy (best effort).
  try {
    execFileSync('strip', ['--strip-unneeded', join(stage, 'bin/linux-x64/stitchcuda')]);
  } catch {
    console.warn('package: strip not available; shipping the host binary unstripped');
  }
} else if (argv.includes('--allow-missing-host')) {
  console.warn(`package: no host binary at ${host}; the .vsix will need the stitchcuda.hostPath setting`);
} else {
  console.error(`package: no host binary at ${host}. Build it first (make build) or pass --host PATH.`);
  process.exit(1);
}
// The harness is found by the host next to its binary's ancestors (harness/stitchcuda_harness).
cpSync(join(root, 'harness'), join(stage, 'harness'), {
  recursive: true,
  filter: (src) => !/(__pycache__|\.pyc$|\.pytest_cache|\.egg-info)/.test(src),
});

const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
delete manifest.scripts;
delete manifest.devDependencies;
delete manifest.dependencies;
writeFileSync(join(stage, 'package.json'), JSON.stringify(manifest, null, 2));
writeFileSync(join(stage, '.vscodeignore'), '**/*.map\n');

mkdirSync(dirname(out), { recursive: true });
const vsce = join(root, 'node_modules/@vscode/vsce/vsce');
execFileSync(process.execPath, [
  vsce, 'package', '--no-dependencies', '--target', 'linux-x64', '--allow-missing-repository',
  '--no-rewrite-relative-links', '--out', out,
], { cwd: stage, stdio: 'inherit' });
console.log(`package: wrote ${out}`);
