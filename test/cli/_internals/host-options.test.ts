import { Command } from 'commander';
import { describe, expect, it } from 'vitest';

import { COMMANDS } from '../../../src/cli/commands.js';

/** The SSH flags that follow `--hosts` on every command that takes hosts. */
const SSH_FLAGS = [
  '--username',
  '--ssh-private-key',
  '--ssh-port',
  '--strict-host-key-checking',
  '--known-hosts',
];

function program(): Command {
  const p = new Command('mallory');
  for (const register of COMMANDS) register(p, () => undefined);
  return p;
}

/** A command's options as `--help` shows them: flags, help text, default and choices, in order. */
function options(
  name: string,
): { long: string; flags: string; help: string; default: unknown; choices: unknown }[] {
  const command = program().commands.find((c) => c.name() === name);
  if (command === undefined) throw new Error(`no command ${name}`);
  return command.options.map((o) => ({
    long: o.long ?? '',
    flags: o.flags,
    help: o.description,
    default: o.defaultValue as unknown,
    choices: o.argChoices,
  }));
}

describe('the host flags, one definition for run, replay and doctor', () => {
  it('each command has --hosts, then the same SSH flags (help, default, choices) in the same order', () => {
    const ssh = (name: string) => {
      const all = options(name);
      const at = all.findIndex((o) => o.long === '--hosts');
      expect(at, `${name} has --hosts`).toBeGreaterThanOrEqual(0);
      return all.filter((o) => SSH_FLAGS.includes(o.long));
    };
    const run = ssh('run');
    expect(run.map((o) => o.long)).toEqual(SSH_FLAGS);
    expect(ssh('replay')).toEqual(run);
    expect(ssh('doctor')).toEqual(run);
    expect(run.find((o) => o.long === '--strict-host-key-checking')?.choices).toEqual([
      'yes',
      'accept-new',
      'no',
    ]);
  });

  it("run's --hosts also takes docker:IMAGE, and --docker-host comes right after it, before the SSH flags", () => {
    const run = options('run').map((o) => o.long);
    const at = run.indexOf('--hosts');
    expect(run.slice(at, at + 2 + SSH_FLAGS.length)).toEqual(['--hosts', '--docker-host', ...SSH_FLAGS]);
    expect(options('run')[at].help).toContain('docker:IMAGE');
    expect(options('doctor').find((o) => o.long === '--hosts')?.help).not.toContain('docker:IMAGE');
  });
});
