import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { shellQuote } from '../core/shell.js';
import type { NodeRuntime } from './runtime/runtime.js';

const MS_PER_S = 1000;

/**
 * A control file's text: libfaketime's relative offset in seconds (it takes fractions), so
 * `-60000` ms is `-60.000` and no offset is `+0.000`.
 */
export function faketimeSpec(offsetMs: number): string {
  const rounded = Math.round(offsetMs);
  const sign = rounded < 0 ? '-' : '+';
  return `${sign}${(Math.abs(rounded) / MS_PER_S).toFixed(3)}\n`;
}

/** Where a node's clock control file lives: beside its logs, in the run dir. */
export function clockControlFile(runDir: string, node: string): string {
  return join(runDir, 'nodes', node, 'clock.faketime');
}

/** Writes a control file so a reader sees the old text or the new, never a partial one. */
export function writeControlFile(file: string, offsetMs: number): void {
  mkdirSync(dirname(file), { recursive: true });
  const temp = `${file}.tmp`;
  writeFileSync(temp, faketimeSpec(offsetMs));
  renameSync(temp, file);
}

/**
 * The shell text that puts `offsetMs` in a control file whole (a temp file moved over it, so
 * libfaketime reads the old text or the new); with `ifMissing` an existing file stays as it is.
 */
export function controlFileScript(
  file: string,
  offsetMs: number,
  options: { readonly ifMissing?: boolean; readonly mkdir?: boolean } = {},
): string {
  const f = shellQuote(file);
  const temp = shellQuote(`${file}.tmp`);
  return (
    (options.ifMissing === true ? `[ -e ${f} ] && exit 0; ` : '') +
    (options.mkdir === true ? `mkdir -p ${shellQuote(dirname(file))} && ` : '') +
    `printf '%s\\n' ${shellQuote(faketimeSpec(offsetMs).trim())} > ${temp} && mv -f ${temp} ${f}`
  );
}

/**
 * Each node's clock control file where it runs, under the run's dir there
 * (`<root>/nodes/<n>/clock.faketime`): written here directly where the node's runtime shares this
 * machine's files (no command per write), else by one command there (`controlFileScript`).
 */
export class ControlFiles {
  /** Nodes whose control file's dir is known to be there. */
  private readonly dirMade = new Set<string>();

  constructor(
    private readonly root: string,
    private readonly runtimeOf: (node: string) => NodeRuntime,
  ) {}

  path(node: string): string {
    return clockControlFile(this.root, node);
  }

  /** Whether the node's control file is on this machine (written at once, `writeControlFile`). */
  isHere(node: string): boolean {
    return this.runtimeOf(node).capabilities.sharedFilesystem;
  }

  /** Writes the node's offset whole; with `ifMissing` an existing file stays as it is. */
  async write(node: string, offsetMs: number, ifMissing = false): Promise<void> {
    const runtime = this.runtimeOf(node);
    const file = this.path(node);
    const failed = (why: string): Error =>
      new Error(`host ${runtime.host}: cannot write ${node}'s clock control file ${file} (${why})`);
    if (runtime.capabilities.sharedFilesystem) {
      if (ifMissing && existsSync(file)) return;
      try {
        writeControlFile(file, offsetMs);
      } catch (error) {
        throw failed(error instanceof Error ? error.message : String(error));
      }
      return;
    }
    const script = controlFileScript(file, offsetMs, { ifMissing, mkdir: !this.dirMade.has(node) });
    const result = await runtime.exec(['sh', '-c', script]);
    if (result.code !== 0) throw failed(`exit ${result.code}: ${result.stderr.trim()}`);
    this.dirMade.add(node);
  }
}
