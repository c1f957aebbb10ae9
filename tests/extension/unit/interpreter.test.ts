// Pins which Python interpreter runs the harness: the stitchcuda.pythonPath setting, else the one
// the Python extension (ms-python.python, optional) selected for the model's file, else python3 on
// PATH; how it reaches the host; following its changes; and the error offered when it has no
// PyTorch. The Python extension is stubbed in the shape vscode.extensions.getExtension returns.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  chooseInterpreter, ExtensionLike, hostPython, interpreterFromPythonApi, interpreterNotice, interpreterProblem,
  onInterpreterChange, OPEN_SETTINGS, PythonApi, pythonApi, SELECT_INTERPRETER,
} from '../../../extension/src/model/interpreter';
import { hostLaunch, readSettings, resolveHost } from '../../../extension/src/model/settings';

const MODEL = { fsPath: '/work/models/mlp.py', toString: () => 'file:///work/models/mlp.py' };

/** An Extension<PythonApi> as getExtension returns it; `active: false` makes activate() hand the API over. */
function pythonExtension(api: PythonApi, active = true): ExtensionLike & { activations: number } {
  const ext = {
    activations: 0,
    isActive: active,
    exports: active ? api : undefined,
    async activate() {
      ext.activations += 1;
      ext.isActive = true;
      ext.exports = api;
      return api;
    },
  };
  return ext;
}

/** The environments API, selecting `byResource(resource)`; records what it was asked. */
function environmentsApi(byResource: (r: unknown) => string, executable?: (path: string) => string | undefined) {
  const asked: unknown[] = [];
  const listeners: ((e: unknown) => unknown)[] = [];
  const api: PythonApi = {
    ready: Promise.resolve(),
    environments: {
      getActiveEnvironmentPath(resource?: unknown) {
        asked.push(resource);
        const path = byResource(resource);
        return { id: path, path };
      },
      async resolveEnvironment(env) {
        const path = typeof env === 'string' ? env : env.path;
        const exe = executable ? executable(path) : path;
        return { executable: { uri: exe ? { fsPath: exe } : undefined } };
      },
      onDidChangeActiveEnvironmentPath(listener) {
        listeners.push(listener);
        return { dispose: () => listeners.splice(listeners.indexOf(listener), 1) };
      },
    },
  };
  return { api, asked, listeners };
}

test('the stitchcuda.pythonPath setting wins over the Python extension', async () => {
  const { api, asked } = environmentsApi(() => '/venvs/ext/bin/python');
  const ext = pythonExtension(api, false);
  assert.deepEqual(await chooseInterpreter('/opt/torch/bin/python3', ext, MODEL), { path: '/opt/torch/bin/python3', source: 'setting' });
  assert.equal(ext.activations, 0, 'the Python extension is not even activated');
  assert.equal(asked.length, 0);
});

test('with the setting empty, the interpreter selected in the Python extension for the model file', async () => {
  const { api, asked } = environmentsApi((r) => (r === MODEL ? '/work/.venv/bin/python' : '/usr/bin/python3'));
  const ext = pythonExtension(api, false);
  const chosen = await chooseInterpreter('', ext, MODEL);
  assert.deepEqual(chosen, { path: '/work/.venv/bin/python', source: 'pythonExtension' });
  assert.equal(ext.activations, 1, 'an inactive Python extension is activated');
  assert.deepEqual(asked, [MODEL], 'asked for the file being optimized');
  // A conda environment's path is its folder: the resolved executable is what runs.
  const conda = environmentsApi(() => '/opt/conda/envs/torch', (p) => `${p}/bin/python`);
  assert.equal((await chooseInterpreter('', pythonExtension(conda.api), MODEL)).path, '/opt/conda/envs/torch/bin/python');
});

test('the older API: execution details, when they are one program', async () => {
  const older = (execCommand: string[] | undefined): PythonApi => ({ settings: { getExecutionDetails: () => ({ execCommand }) } });
  assert.equal(await interpreterFromPythonApi(older(['/usr/local/bin/python3.11']), MODEL), '/usr/local/bin/python3.11');
  assert.equal(await interpreterFromPythonApi(older(['conda', 'run', '-n', 'torch', 'python']), MODEL), undefined);
  assert.equal(await interpreterFromPythonApi(older(['python']), MODEL), undefined, 'a bare name means nothing is selected');
  assert.deepEqual(await chooseInterpreter('', pythonExtension(older(['conda', 'run', 'python'])), MODEL), { path: 'python3', source: 'default' });
});

test('without the Python extension (or with one that fails): python3 on PATH, which the host gets as its own default', async () => {
  const none = await chooseInterpreter('', undefined, MODEL);
  assert.deepEqual(none, { path: 'python3', source: 'default' });
  assert.equal(hostPython(none), '', 'the host is told no interpreter: its default is python3 (or $STITCHCUDA_PYTHON)');
  assert.deepEqual(await chooseInterpreter('', undefined, MODEL, '/env/python'), { path: '/env/python', source: 'default' });
  const broken: ExtensionLike = { isActive: false, exports: undefined, activate: () => Promise.reject(new Error('activation failed')) };
  assert.equal(await pythonApi(broken), undefined);
  assert.equal((await chooseInterpreter('', broken, MODEL)).source, 'default');
  const throwing: PythonApi = { environments: { getActiveEnvironmentPath: () => { throw new Error('no'); }, resolveEnvironment: async () => undefined } };
  assert.equal((await chooseInterpreter('', pythonExtension(throwing), MODEL)).source, 'default');
});

test('the chosen interpreter reaches the host as its python path: initializationOptions.python and STITCHCUDA_PYTHON', async () => {
  const settings = readSettings((k) => ({ brain: 'builtin', pythonPath: '' } as Record<string, unknown>)[k]);
  const loc = resolveHost(settings, '/ext', 'linux', 'x64', () => false);
  const { api } = environmentsApi(() => '/work/.venv/bin/python');
  const chosen = await chooseInterpreter(settings.pythonPath, pythonExtension(api), MODEL);
  const launch = hostLaunch(loc, { ...settings, pythonPath: hostPython(chosen) }, { PATH: '/bin' }, undefined);
  assert.equal(launch.initializationOptions.python, '/work/.venv/bin/python');
  assert.equal(launch.env.STITCHCUDA_PYTHON, '/work/.venv/bin/python');
  const fallback = hostLaunch(loc, { ...settings, pythonPath: hostPython(await chooseInterpreter('', undefined, MODEL)) }, {}, undefined);
  assert.equal(fallback.initializationOptions.python, undefined);
  assert.equal(fallback.env.STITCHCUDA_PYTHON, undefined);
});

test('interpreter changes in the Python extension are followed, and the subscription ends on dispose', async () => {
  let selected = '/a/bin/python';
  const { api, listeners } = environmentsApi(() => selected);
  let fired = 0;
  const sub = onInterpreterChange(await pythonApi(pythonExtension(api)), () => { fired += 1; });
  assert.equal(listeners.length, 1);
  selected = '/b/bin/python';
  listeners[0]({ id: selected, path: selected });
  assert.equal(fired, 1);
  assert.equal((await chooseInterpreter('', pythonExtension(api), MODEL)).path, '/b/bin/python');
  sub.dispose();
  assert.equal(listeners.length, 0);
  onInterpreterChange(undefined, () => { fired += 1; }).dispose();  // no Python extension: nothing to follow
});

test('a job failing for want of PyTorch is the interpreter\'s problem; other failures are not', () => {
  // What the host sends (jobFinished.message) when the harness worker cannot import torch.
  assert.equal(interpreterProblem("ModuleNotFoundError: No module named 'torch' [internal_error]"), 'noTorch');
  assert.equal(interpreterProblem("hello failed: ModuleNotFoundError: No module named 'torch._C' [internal_error]"), 'noTorch');
  assert.equal(interpreterProblem('the harness worker could not start (cannot run /nope/python: No such file or directory) [worker_start_failed]'), 'notRunnable');
  assert.equal(interpreterProblem("/j/1/m.py:2: importing m.py: ModuleNotFoundError: No module named 'torchvision' [task_import_error]"), undefined);
  assert.equal(interpreterProblem("/j/1/m.py:3: expected ':' [syntax_error]"), undefined);
  assert.equal(interpreterProblem(undefined), undefined);
});

test('an interpreter without PyTorch: the error offers "Select interpreter" (python.setInterpreter) and "Open settings"', () => {
  const chosen = { path: '/work/.venv/bin/python', source: 'pythonExtension' as const };
  const notice = interpreterNotice('noTorch', chosen, true);
  assert.match(notice.message, /\/work\/\.venv\/bin\/python .*has no PyTorch/);
  assert.deepEqual(notice.actions, [
    { title: SELECT_INTERPRETER, command: 'python.setInterpreter', args: [] },
    { title: OPEN_SETTINGS, command: 'workbench.action.openSettings', args: ['stitchcuda.pythonPath'] },
  ]);
  // Without the Python extension its command does not exist: only the setting is offered.
  const alone = interpreterNotice('noTorch', { path: 'python3', source: 'default' }, false);
  assert.deepEqual(alone.actions.map((a) => a.title), [OPEN_SETTINGS]);
  assert.match(alone.message, /python3 .*on PATH.*has no PyTorch.*stitchcuda\.pythonPath/);
  // Set in the setting, which the Python extension's choice does not override: the message says so.
  assert.match(interpreterNotice('noTorch', { path: '/x/python', source: 'setting' }, true).message, /stitchcuda\.pythonPath/);
  assert.match(interpreterNotice('notRunnable', chosen, true).message, /could not be started/);
});
