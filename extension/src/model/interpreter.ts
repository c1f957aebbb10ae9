// Which Python interpreter runs the harness: the stitchcuda.pythonPath setting, else the one
// selected in the Python extension (ms-python.python, optional) for the model's file, else
// `python3` on PATH. And what to tell the user when the chosen interpreter cannot run the harness
// (no PyTorch, or no such program). Pure: no 'vscode' import; the caller passes what
// vscode.extensions.getExtension('ms-python.python') returned, which the tests stub.

/** The Python extension's id. It is optional: without it the fallback is `python3` on PATH. */
export const PYTHON_EXTENSION_ID = 'ms-python.python';
/** The interpreter the host uses when told none ($STITCHCUDA_PYTHON aside): `python3` on PATH. */
export const DEFAULT_PYTHON = 'python3';

export type InterpreterSource = 'setting' | 'pythonExtension' | 'default';

export interface Interpreter {
  /** What the host runs the harness with. */
  path: string;
  source: InterpreterSource;
}

/** The host's python option: unset for the default, so the host's own default ($STITCHCUDA_PYTHON, else python3) holds. */
export function hostPython(i: Interpreter): string {
  return i.source === 'default' ? '' : i.path;
}

export function describeInterpreter(i: Interpreter): string {
  switch (i.source) {
    case 'setting': return `${i.path} (the stitchcuda.pythonPath setting)`;
    case 'pythonExtension': return `${i.path} (selected in the Python extension)`;
    default: return `${i.path} (on PATH; neither stitchcuda.pythonPath nor a Python extension interpreter is set)`;
  }
}

/** The subset of vscode.Extension<T> read here. */
export interface ExtensionLike {
  readonly isActive: boolean;
  readonly exports: unknown;
  activate(): PromiseLike<unknown>;
}

export interface Disposable { dispose(): unknown }
export type Subscribe<E> = (listener: (e: E) => unknown) => Disposable;

export interface EnvironmentPathLike { id?: string; path: string }

/** The parts of the Python extension's exported API (`@vscode/python-extension`) this extension uses. */
export interface PythonApi {
  ready?: PromiseLike<unknown>;
  environments?: {
    getActiveEnvironmentPath(resource?: unknown): EnvironmentPathLike | undefined;
    resolveEnvironment(env: EnvironmentPathLike | string): PromiseLike<{ executable?: { uri?: { fsPath: string } } } | undefined>;
    onDidChangeActiveEnvironmentPath?: Subscribe<unknown>;
  };
  /** The older API: the command that runs Python for a resource. */
  settings?: {
    getExecutionDetails(resource?: unknown): { execCommand: string[] | undefined } | undefined;
    onDidChangeExecutionDetails?: Subscribe<unknown>;
  };
}

function isAbsolutePath(p: string): boolean {
  return p.startsWith('/') || /^[A-Za-z]:[\\/]/.test(p) || p.startsWith('\\\\');
}

/** The Python extension's API, activated; undefined when it is absent or fails to activate. */
export async function pythonApi(ext: ExtensionLike | undefined): Promise<PythonApi | undefined> {
  if (!ext) return undefined;
  try {
    const exports = (ext.isActive ? ext.exports : await ext.activate()) ?? ext.exports;
    if (!exports || typeof exports !== 'object') return undefined;
    const api = exports as PythonApi;
    if (api.ready) await api.ready;
    return api;
  } catch {
    return undefined;
  }
}

/**
 * The interpreter the Python extension selected for `resource` (a file's URI): the environment
 * API's resolved executable, else the older execution details when they are one program. Only an
 * absolute path counts: a bare `python` means nothing is selected, and `conda run …` is not one
 * program the host could start.
 */
export async function interpreterFromPythonApi(api: PythonApi | undefined, resource: unknown): Promise<string | undefined> {
  if (!api) return undefined;
  const envs = api.environments;
  if (envs && typeof envs.getActiveEnvironmentPath === 'function') {
    try {
      const active = envs.getActiveEnvironmentPath(resource);
      if (active) {
        const resolved = typeof envs.resolveEnvironment === 'function' ? await envs.resolveEnvironment(active) : undefined;
        const exe = resolved?.executable?.uri?.fsPath;
        if (exe && isAbsolutePath(exe)) return exe;
        // A path is the executable, or a conda environment's folder (which resolves to its executable above).
        if (!resolved && active.path && isAbsolutePath(active.path) && /python[0-9.]*(\.exe)?$/i.test(active.path)) return active.path;
      }
    } catch {
      // fall through to the older API
    }
  }
  if (api.settings && typeof api.settings.getExecutionDetails === 'function') {
    try {
      const cmd = api.settings.getExecutionDetails(resource)?.execCommand;
      if (cmd && cmd.length === 1 && isAbsolutePath(cmd[0])) return cmd[0];
    } catch {
      // nothing usable
    }
  }
  return undefined;
}

/**
 * The setting, else the Python extension's interpreter for `resource`, else `fallback`: `python3`
 * on PATH (or what $STITCHCUDA_PYTHON names, which the host takes as its own default).
 */
export async function chooseInterpreter(
  settingPath: string, ext: ExtensionLike | undefined, resource: unknown, fallback: string = DEFAULT_PYTHON,
): Promise<Interpreter> {
  if (settingPath.trim()) return { path: settingPath.trim(), source: 'setting' };
  const fromExtension = await interpreterFromPythonApi(await pythonApi(ext), resource);
  if (fromExtension) return { path: fromExtension, source: 'pythonExtension' };
  return { path: fallback || DEFAULT_PYTHON, source: 'default' };
}

/** Subscribes to the Python extension's interpreter changes (either API); a no-op without one. */
export function onInterpreterChange(api: PythonApi | undefined, listener: () => void): Disposable {
  const subs: Disposable[] = [];
  const envSub = api?.environments?.onDidChangeActiveEnvironmentPath;
  if (typeof envSub === 'function') subs.push(envSub.call(api!.environments, () => listener()));
  else {
    const old = api?.settings?.onDidChangeExecutionDetails;
    if (typeof old === 'function') subs.push(old.call(api!.settings, () => listener()));
  }
  return { dispose: () => subs.forEach((s) => s.dispose()) };
}

export type InterpreterProblemKind = 'noTorch' | 'notRunnable';

/**
 * Whether a job's failure is the interpreter's: the harness cannot import PyTorch (the host
 * reports the worker's `ModuleNotFoundError: No module named 'torch' [internal_error]`: there is no
 * dedicated code), or the interpreter cannot be started (`[worker_start_failed]`).
 */
export function interpreterProblem(message: string | undefined): InterpreterProblemKind | undefined {
  if (!message) return undefined;
  if (/No module named '?torch(?:[.'"\s]|$)/.test(message)) return 'noTorch';
  if (/\[worker_start_failed\]/.test(message)) return 'notRunnable';
  return undefined;
}

/** A problem of the interpreter in one sentence, for a view that does not know which interpreter it was. */
export function interpreterProblemText(kind: InterpreterProblemKind): string {
  return kind === 'noTorch'
    ? 'The Python interpreter that runs the harness has no PyTorch. Set stitchcuda.pythonPath to an interpreter that has it.'
    : 'The Python interpreter that runs the harness could not be started. Set stitchcuda.pythonPath to an interpreter that has PyTorch.';
}

export interface NoticeAction { title: string; command: string; args: unknown[] }
export interface InterpreterNotice { message: string; actions: NoticeAction[] }

export const SELECT_INTERPRETER = 'Select interpreter';
export const OPEN_SETTINGS = 'Open settings';

/** The error message and its actions for an interpreter that cannot run the harness. */
export function interpreterNotice(kind: InterpreterProblemKind, i: Interpreter, pythonExtensionPresent: boolean): InterpreterNotice {
  const what = kind === 'noTorch'
    ? `the Python interpreter ${describeInterpreter(i)} has no PyTorch`
    : `the Python interpreter ${describeInterpreter(i)} could not be started`;
  const how = i.source === 'setting'
    ? 'Install PyTorch there, or point stitchcuda.pythonPath at an interpreter that has it (empty: the Python extension\'s choice).'
    : pythonExtensionPresent
      ? 'Install PyTorch there, or select an interpreter that has it.'
      : 'Install PyTorch there, or set stitchcuda.pythonPath to an interpreter that has it (or install the Python extension and select one).';
  const actions: NoticeAction[] = [];
  if (pythonExtensionPresent) actions.push({ title: SELECT_INTERPRETER, command: 'python.setInterpreter', args: [] });
  actions.push({ title: OPEN_SETTINGS, command: 'workbench.action.openSettings', args: ['stitchcuda.pythonPath'] });
  return { message: `StitchCUDA: ${what}. ${how}`, actions };
}
