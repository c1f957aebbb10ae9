// The output channel vscode-languageclient writes to: it appends the host's stderr and its own
// stamped messages as text; this passes them on to the StitchCUDA log channel one line at a time,
// at the line's level, with no stamp of their own (model/hostLog.ts says why).
import * as vscode from 'vscode';
import { HostLogLine, HostLogSplitter, TracebackBlocks } from '../model/hostLog';
import { interpreterProblem } from '../model/interpreter';

export function hostLogChannel(log: vscode.LogOutputChannel): vscode.OutputChannel {
  const splitter = new HostLogSplitter();
  // An interpreter without PyTorch is told in one line naming the setting (Interpreters.showProblem);
  // the worker's traceback about it goes to the debug log.
  const tracebacks = new TracebackBlocks((exception) => (interpreterProblem(exception) ? 'debug' : undefined));
  const write = (lines: HostLogLine[]) => {
    for (const { level, text } of tracebacks.push(lines)) log[level](text);
  };
  return {
    name: log.name,
    append: (value: string) => write(splitter.push(value)),
    appendLine: (value: string) => write(splitter.push(value + '\n')),
    replace: (value: string) => {
      splitter.flush();
      log.replace(value);
    },
    clear: () => log.clear(),
    show: (column?: vscode.ViewColumn | boolean, preserveFocus?: boolean) =>
      typeof column === 'boolean' ? log.show(column) : log.show(column, preserveFocus),
    hide: () => log.hide(),
    // The log channel is the extension's; the client's dispose of its channel leaves it open.
    dispose: () => {
      write(splitter.flush());
      for (const { level, text } of tracebacks.flush()) log[level](text);
    },
  };
}
