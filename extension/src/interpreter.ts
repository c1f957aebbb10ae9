// The Python interpreter that runs the harness, as VS Code knows it: the stitchcuda.pythonPath
// setting, else the interpreter selected in the Python extension for the model's file (the
// extension is optional, never a dependency), else `python3` on PATH (model/interpreter.ts
// decides); its changes; and the error shown when it cannot run the harness (no PyTorch).

import * as vscode from 'vscode';
import {
  chooseInterpreter, DEFAULT_PYTHON, Disposable, ExtensionLike, Interpreter, InterpreterProblemKind, interpreterNotice,
  onInterpreterChange, PYTHON_EXTENSION_ID, pythonApi,
} from './model/interpreter';

/** How long to wait for the Python extension (it discovers environments when it activates). */
const PYTHON_EXTENSION_WAIT_MS = 15000;

function pythonExtension(): ExtensionLike | undefined {
  return vscode.extensions.getExtension(PYTHON_EXTENSION_ID);
}

/** The resource whose interpreter the host starts with: the active Python file, else the first workspace folder. */
export function defaultResource(): vscode.Uri | undefined {
  const doc = vscode.window.activeTextEditor?.document;
  if (doc && doc.languageId === 'python' && doc.uri.scheme === 'file') return doc.uri;
  return vscode.workspace.workspaceFolders?.[0]?.uri;
}

export class Interpreters implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  /** The Python extension's selection changed (for some resource), or the extension came or went. */
  readonly onDidChange = this.changed.event;
  private sub: Disposable | undefined;
  private readonly extSub: vscode.Disposable;
  private hadExtension = !!pythonExtension();

  constructor(private readonly output: vscode.LogOutputChannel) {
    this.extSub = vscode.extensions.onDidChange(() => {
      const has = !!pythonExtension();
      if (has === this.hadExtension) return;
      this.hadExtension = has;
      this.sub?.dispose();
      this.sub = undefined;
      this.changed.fire();
    });
  }

  get pythonExtensionPresent(): boolean {
    return !!pythonExtension();
  }

  private settingPath(): string {
    const v = vscode.workspace.getConfiguration('stitchcuda').get<string>('pythonPath');
    return typeof v === 'string' ? v.trim() : '';
  }

  /** The interpreter for `resource` (a model file); subscribes to the Python extension's changes on first use. */
  async resolve(resource: vscode.Uri | undefined = defaultResource()): Promise<Interpreter> {
    const fallback = process.env.STITCHCUDA_PYTHON || DEFAULT_PYTHON;
    const setting = this.settingPath();
    if (setting) return chooseInterpreter(setting, undefined, resource, fallback);
    const ext = pythonExtension();
    const work = (async () => {
      if (ext && !this.sub) {
        const api = await pythonApi(ext);
        if (api && !this.sub) this.sub = onInterpreterChange(api, () => this.changed.fire());
      }
      return chooseInterpreter('', ext, resource, fallback);
    })();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<Interpreter>((resolve) => {
      timer = setTimeout(() => {
        this.output.warn(`the Python extension did not answer within ${PYTHON_EXTENSION_WAIT_MS / 1000} s; using ${fallback}`);
        resolve({ path: fallback, source: 'default' });
      }, PYTHON_EXTENSION_WAIT_MS);
    });
    try {
      return await Promise.race([work, timeout]);
    } finally {
      if (timer) clearTimeout(timer);
    }
  }

  /** The error for an interpreter that cannot run the harness, with "Select interpreter" and "Open settings". */
  async showProblem(kind: InterpreterProblemKind, interpreter: Interpreter, detail?: string): Promise<void> {
    const notice = interpreterNotice(kind, interpreter, this.pythonExtensionPresent);
    this.output.error(notice.message);
    if (detail) this.output.debug(`the harness said: ${detail}`);
    const pick = await vscode.window.showErrorMessage(notice.message, ...notice.actions.map((a) => a.title));
    const action = notice.actions.find((a) => a.title === pick);
    if (action) await vscode.commands.executeCommand(action.command, ...action.args);
  }

  dispose(): void {
    this.sub?.dispose();
    this.extSub.dispose();
    this.changed.dispose();
  }
}
