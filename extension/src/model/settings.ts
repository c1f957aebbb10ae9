// The extension's settings as one plain struct, and what follows from them: where the host
// binary is, how it is started, and the stitchcuda/optimize request. Pure: no 'vscode'
// import; extension.ts reads the configuration and passes it in.

import { OptimizeParams, Precision, PRECISIONS, PrecisionMode } from './protocol';

export type Brain = 'builtin' | 'openai' | 'anthropic';

export interface Settings {
  hostPath: string;
  pythonPath: string;
  brain: Brain;
  baseUrl: string;
  model: string;
  budgetIterations?: number;
  budgetWallSeconds?: number;
  atol?: number;
  rtol?: number;
  allowPrecision: Precision[];
  precision: PrecisionMode;
  gpu?: number | null;
  kernelsFolder: string;
}

/** The default folder beside the model that accepted programs are written to. */
export const DEFAULT_KERNELS_FOLDER = 'stitchcuda_kernels';

/** Reads settings from any getter (vscode's WorkspaceConfiguration.get fits). */
export function readSettings(get: (key: string) => unknown): Settings {
  const s = (k: string): string => (typeof get(k) === 'string' ? (get(k) as string).trim() : '');
  const n = (k: string): number | undefined => {
    const v = get(k);
    return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
  };
  const brain = s('brain');
  const gpu = get('gpu');
  const precisions = get('allowPrecision');
  const allowPrecision = Array.isArray(precisions)
    ? [...new Set(precisions.filter((p): p is Precision => (PRECISIONS as readonly unknown[]).includes(p)))]
    : [];
  return {
    hostPath: s('hostPath'),
    pythonPath: s('pythonPath'),
    brain: brain === 'openai' || brain === 'anthropic' ? brain : 'builtin',
    baseUrl: s('baseUrl'),
    model: s('model'),
    budgetIterations: n('budget.iterations'),
    budgetWallSeconds: n('budget.wallSeconds'),
    atol: n('tolerance.atol'),
    rtol: n('tolerance.rtol'),
    allowPrecision,
    precision: s('precision') === 'fp32' ? 'fp32' : 'eager',
    gpu: typeof gpu === 'number' && Number.isInteger(gpu) && gpu >= 0 ? gpu : null,
    // A Python package name (the model imports the loader from it); anything else is the default.
    kernelsFolder: /^[A-Za-z_][A-Za-z0-9_]*$/.test(s('kernelsFolder')) ? s('kernelsFolder') : DEFAULT_KERNELS_FOLDER,
  };
}

/** The platform folder of a bundled host binary (bin/<platform>/stitchcuda in the .vsix). */
export function platformFolder(platform: string, arch: string): string {
  return `${platform}-${arch}`;
}

export interface HostLocation { command: string; source: 'setting' | 'bundled' | 'path'; bundledRoot?: string }

/**
 * Which host binary to start: the hostPath setting, else the binary bundled in the
 * extension for this platform, else `stitchcuda` on PATH.
 */
export function resolveHost(
  settings: Settings, extensionPath: string, platform: string, arch: string, exists: (p: string) => boolean,
): HostLocation {
  if (settings.hostPath) return { command: settings.hostPath, source: 'setting' };
  const exe = platform === 'win32' ? 'stitchcuda.exe' : 'stitchcuda';
  const bundled = `${extensionPath}/bin/${platformFolder(platform, arch)}/${exe}`;
  if (exists(bundled)) return { command: bundled, source: 'bundled', bundledRoot: extensionPath };
  return { command: exe, source: 'path' };
}

export interface HostLaunch {
  command: string;
  args: string[];
  env: Record<string, string>;
  initializationOptions: Record<string, unknown>;
}

/** The environment variable through which the host receives the LLM API key. */
export const API_KEY_ENV = 'STITCHCUDA_API_KEY';

/** Secret-storage key for a brain's API key. */
export function secretKey(brain: Brain): string {
  return `stitchcuda.apiKey.${brain}`;
}

/**
 * How to start the host: `<binary> serve`, the API key (if any) only in the environment,
 * never in arguments or initializationOptions (those are logged by traces).
 */
export function hostLaunch(
  loc: HostLocation, settings: Settings, baseEnv: Record<string, string | undefined>, apiKey: string | undefined,
): HostLaunch {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(baseEnv)) if (v !== undefined && k !== API_KEY_ENV) env[k] = v;
  if (apiKey) env[API_KEY_ENV] = apiKey;
  if (settings.pythonPath) env.STITCHCUDA_PYTHON = settings.pythonPath;
  const initializationOptions: Record<string, unknown> = {};
  if (settings.pythonPath) initializationOptions.python = settings.pythonPath;
  if (loc.bundledRoot) initializationOptions.harnessDir = `${loc.bundledRoot}/harness`;
  return { command: loc.command, args: ['serve'], env, initializationOptions };
}

/** The stitchcuda/optimize request for a document. */
export function optimizeParams(uri: string, settings: Settings, workDoneToken?: string): OptimizeParams {
  const p: OptimizeParams = { textDocument: { uri }, brain: settings.brain };
  if (settings.brain !== 'builtin') {
    if (settings.model) p.model = settings.model;
    if (settings.baseUrl) p.baseUrl = settings.baseUrl;
  }
  const budget: { iterations?: number; wallSeconds?: number } = {};
  if (settings.budgetIterations !== undefined) budget.iterations = Math.max(1, Math.round(settings.budgetIterations));
  if (settings.budgetWallSeconds !== undefined) budget.wallSeconds = Math.max(1, settings.budgetWallSeconds);
  if (Object.keys(budget).length) p.budget = budget;
  if (settings.atol !== undefined || settings.rtol !== undefined) {
    p.tolerance = { atol: settings.atol ?? 1e-4, rtol: settings.rtol ?? 1e-4 };
  }
  if (settings.allowPrecision.length) p.allowPrecision = [...settings.allowPrecision];
  if (settings.precision === 'fp32') p.precision = 'fp32';  // "eager" is the host's default
  if (settings.gpu !== undefined && settings.gpu !== null) p.gpu = settings.gpu;
  if (settings.kernelsFolder !== DEFAULT_KERNELS_FOLDER) p.kernelsFolder = settings.kernelsFolder;
  if (workDoneToken !== undefined) p.workDoneToken = workDoneToken;
  return p;
}

/** Settings whose change needs a host restart (they are fixed when the process starts). */
export const RESTART_KEYS = ['stitchcuda.hostPath', 'stitchcuda.pythonPath', 'stitchcuda.brain'];
