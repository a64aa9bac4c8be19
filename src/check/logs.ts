import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';

import type { NodeExit } from '../cluster/cluster.js';

/** Text that means a node crashed or broke an internal invariant (the artifact's log patterns). */
export const GENERIC_CRASH_PATTERNS: readonly RegExp[] = [
  /\bpanic(?:ked)?:/,
  /AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|ThreadSanitizer/,
  /Assertion [`'"].*[`'"] failed|assertion failed|ASSERTION FAILED/i,
  /[Ss]egmentation fault|core dumped/,
  /\bfatal error:|\bFATAL\b/,
];

/** A crash found in a node's output or exit. */
export interface LogFinding {
  readonly node: string;
  readonly kind: 'crash-text' | 'unexpected-exit';
  readonly message: string;
  /** The lines that show it, with the node's last lines before it. */
  readonly lines: readonly string[];
}

const CONTEXT_LINES = 20;
const MAX_READ_BYTES = 8 * 1024 * 1024;

/**
 * The log check: reads what each node wrote since the last call and reports crash text, and turns
 * exits that nothing we did caused into findings with the node's last lines.
 */
export class LogCheck {
  private readonly offsets = new Map<string, number>();
  private readonly tails = new Map<string, string[]>();
  private readonly patterns: readonly RegExp[];

  constructor(
    private readonly runDir: string,
    systemPatterns: readonly RegExp[],
  ) {
    this.patterns = [...GENERIC_CRASH_PATTERNS, ...systemPatterns];
  }

  /** Scans new output of `nodes`; `exits` are the node exits seen since the last call. */
  scan(nodes: readonly string[], exits: readonly NodeExit[]): LogFinding[] {
    const findings: LogFinding[] = [];
    for (const node of nodes) {
      for (const stream of ['stdout.log', 'stderr.log']) {
        const file = join(this.runDir, 'nodes', node, stream);
        const lines = this.readNew(file);
        const tail = this.tails.get(file) ?? [];
        for (const line of lines) {
          tail.push(line);
          if (tail.length > CONTEXT_LINES) tail.shift();
          const pattern = this.patterns.find((p) => p.test(line));
          if (pattern) {
            findings.push({
              node,
              kind: 'crash-text',
              message: `${node} ${stream}: ${line.slice(0, 300)}`,
              lines: [...tail],
            });
          }
        }
        this.tails.set(file, tail);
      }
    }
    for (const exit of exits) {
      if (exit.expected) continue;
      const how = exit.signal ? `signal ${exit.signal}` : `code ${exit.code ?? '?'}`;
      const lines = ['stdout.log', 'stderr.log'].flatMap(
        (s) => this.tails.get(join(this.runDir, 'nodes', exit.node, s)) ?? [],
      );
      findings.push({
        node: exit.node,
        kind: 'unexpected-exit',
        message: `${exit.node} exited by itself (${how})`,
        lines,
      });
    }
    return findings;
  }

  private readNew(file: string): string[] {
    let fd: number;
    try {
      fd = openSync(file, 'r');
    } catch {
      return [];
    }
    try {
      const size = fstatSync(fd).size;
      let offset = this.offsets.get(file) ?? 0;
      if (size < offset) offset = 0;
      const length = Math.min(size - offset, MAX_READ_BYTES);
      if (length <= 0) return [];
      const buffer = Buffer.alloc(length);
      readSync(fd, buffer, 0, length, offset);
      const text = buffer.toString('utf8');
      const end = text.lastIndexOf('\n');
      if (end < 0) return [];
      this.offsets.set(file, offset + Buffer.byteLength(text.slice(0, end + 1)));
      return text.slice(0, end).split('\n');
    } finally {
      closeSync(fd);
    }
  }
}
