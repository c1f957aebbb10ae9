// The host's stderr and vscode-languageclient's own messages, as lines for a log output channel.
// The host passes its harness worker's stderr on, Python tracebacks included; a traceback is held
// until its exception line, so that the whole block is logged at one level.
// Both stamp their lines (the host: `I 2026-11-25T10:00:00.000Z [stitchcuda] text`; the client:
// `[Info  - 10:00:00 AM] text`), and a log channel stamps every entry again; stderr arrives in
// chunks that end in a newline, which a log channel shows as an empty entry. So chunks are cut
// into lines, empty lines dropped, and each line's own stamp replaced by its level.

export type HostLogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';
export interface HostLogLine { level: HostLogLevel; text: string }

const HOST_LEVELS: Record<string, HostLogLevel> = { D: 'debug', I: 'info', W: 'warn', E: 'error' };
const CLIENT_LEVELS: Record<string, HostLogLevel> = {
  Trace: 'trace', LSP: 'trace', Debug: 'debug', Info: 'info', Warn: 'warn', Error: 'error',
};
const HOST_LINE = /^([DIWE]) \d{4}-\d\d-\d\dT[\d:.]+Z? \[stitchcuda\] ?(.*)$/;
const CLIENT_LINE = /^\[(Trace|LSP|Debug|Info|Warn|Error)\s*- [^\]]*\] ?(.*)$/;

export function parseHostLogLine(line: string): HostLogLine {
  const host = HOST_LINE.exec(line);
  if (host) return { level: HOST_LEVELS[host[1]], text: host[2] };
  const client = CLIENT_LINE.exec(line);
  if (client) return { level: CLIENT_LEVELS[client[1]], text: client[2] };
  return { level: 'info', text: line };
}

// Accumulates chunks; `push` returns the complete, non-empty lines so far, parsed.
export class HostLogSplitter {
  private pending = '';

  push(chunk: string): HostLogLine[] {
    const lines = (this.pending + chunk).split(/\r?\n/);
    this.pending = lines.pop() ?? '';
    return lines.filter((l) => l.trim() !== '').map(parseHostLogLine);
  }

  // What is left without a newline (the host stopped mid-line).
  flush(): HostLogLine[] {
    const rest = this.pending;
    this.pending = '';
    return rest.trim() === '' ? [] : [parseHostLogLine(rest)];
  }
}

/**
 * Holds a Python traceback ("Traceback (most recent call last):", its indented frames, then the
 * exception line) until it is whole, then gives every line of it the level `levelOf` picks from the
 * exception line (undefined: each keeps its own). Other lines pass at once.
 */
export class TracebackBlocks {
  private held: HostLogLine[] = [];

  constructor(private readonly levelOf: (exception: string) => HostLogLevel | undefined) {}

  push(lines: HostLogLine[]): HostLogLine[] {
    const out: HostLogLine[] = [];
    for (const line of lines) {
      if (this.held.length === 0 && line.text !== 'Traceback (most recent call last):') {
        out.push(line);
        continue;
      }
      this.held.push(line);
      if (this.held.length === 1 || /^\s/.test(line.text)) continue;
      const level = this.levelOf(line.text);
      out.push(...this.held.map((l) => (level ? { level, text: l.text } : l)));
      this.held = [];
    }
    return out;
  }

  // A traceback the host stopped in the middle of, as it came.
  flush(): HostLogLine[] {
    const rest = this.held;
    this.held = [];
    return rest;
  }
}
