import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { Command } from 'commander';
import { describe, expect, it } from 'vitest';

import { COMMANDS } from '../../src/cli/commands.js';

const REPO = resolve(import.meta.dirname, '..', '..');
const reference = readFileSync(join(REPO, 'docs', 'commands.md'), 'utf8');
const synopsis = reference.slice(reference.indexOf('## Synopsis'), reference.indexOf('## `mallory run`'));

/** The synopsis lines of `mallory PATH` (each usage line with the lines that continue it). */
function usageOf(path: string): string {
  const entries: string[] = [];
  for (const line of synopsis.split('\n')) {
    if (line.startsWith('mallory ')) entries.push(line);
    else if (line.startsWith(' ') && entries.length > 0) entries[entries.length - 1] += `\n${line}`;
  }
  return entries.filter((e) => new RegExp(`^mallory ${path}(?![\\w-])`).test(e)).join('\n');
}

/** Every command path of the CLI (`run`, `fleet run`, …) with the long flags it takes. */
function commandsOfProgram(): { readonly path: string; readonly flags: readonly string[] }[] {
  const program = new Command('mallory');
  for (const register of COMMANDS) register(program, () => undefined);
  const walk = (command: Command, prefix: string): { path: string; flags: string[] }[] =>
    command.commands.flatMap((sub) => {
      const path = `${prefix}${sub.name()}`;
      const flags = sub.options.map((o) => o.long).filter((f): f is string => f !== undefined);
      return sub.commands.length > 0 ? walk(sub, `${path} `) : [{ path, flags }];
    });
  return walk(program, '');
}

describe('docs/commands.md, the command reference', () => {
  const commands = commandsOfProgram();

  it('is checked against every command the CLI registers', () => {
    expect(commands.map((c) => c.path)).toEqual(
      expect.arrayContaining(['run', 'check', 'fleet run', 'fleet status', 'fleet report', 'cleanup']),
    );
  });

  it.each(commands.map((c) => [c.path, c.flags] as const))(
    'its synopsis lists mallory %s with every flag the command takes',
    (path, flags) => {
      const usage = usageOf(path);
      expect(usage).not.toBe('');
      const missing = flags.filter((f) => !new RegExp(`${f}(?![\\w-])`).test(usage));
      expect(missing).toEqual([]);
    },
  );
});
