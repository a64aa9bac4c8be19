import { describe, expect, it } from 'vitest';

import { configFromFlags } from '../../src/cli/run.js';
import { DEFAULT_FAULT_FAMILIES } from '../../src/core/fault.js';
import {
  KVRAFT_BUG_NEEDS,
  KVRAFT_BUGS,
  kvraftBugArgs,
  kvraftSimBugArgs,
} from '../../src/systems/kvraft/bugs.js';

const BASE = {
  system: 'kvraft',
  time: '60s',
  policy: 'adaptive',
  faults: DEFAULT_FAULT_FAMILIES.join(','),
  workload: 'register',
  bug: [] as string[],
  store: 'store',
  network: 'auto',
};

type Flags = typeof BASE & { nodes?: string; sim?: boolean; simContract?: string };

/** `--name value` pairs as `mallory run`'s flags (`--bug` repeatable, `--sim` alone). */
function flagsOf(args: readonly string[]): Flags {
  const flags: Flags = { ...BASE, bug: [] };
  for (let i = 0; i < args.length; i += 2) {
    const [name, value] = [args[i].replace(/^--/, ''), args[i + 1]];
    if (name === 'sim') {
      flags.sim = true;
      i--;
    } else if (name === 'sim-contract') flags.simContract = value;
    else if (name === 'bug') flags.bug.push(value);
    else if (name === 'nodes' || name === 'workload' || name === 'faults') flags[name] = value;
    else throw new Error(`unexpected flag ${args[i]}`);
  }
  return flags;
}

describe('what a campaign needs per kvraft bug switch', () => {
  it('every switch gives run flags that parse into a config with its cluster, workload and faults', () => {
    for (const bug of KVRAFT_BUGS) {
      const config = configFromFlags(flagsOf(kvraftBugArgs(bug)));
      expect(config.bugs).toEqual([bug]);
      expect(config.nodes).toBe(KVRAFT_BUG_NEEDS[bug].nodes);
      expect(config.workload).toBe(KVRAFT_BUG_NEEDS[bug].workload);
      expect(config.faults).toEqual([...DEFAULT_FAULT_FAMILIES, ...KVRAFT_BUG_NEEDS[bug].faults]);
    }
  });

  it('names the needs the README gives: five nodes, a transactional workload, disk faults', () => {
    expect(KVRAFT_BUG_NEEDS['snapshot-uncommitted-config'].nodes).toBe(5);
    expect(KVRAFT_BUG_NEEDS['split-txn'].workload).toBe('list-append');
    expect(kvraftBugArgs('ack-before-fsync')).toContain(`${DEFAULT_FAULT_FAMILIES.join(',')},disk`);
    expect(kvraftBugArgs('stale-read')).toEqual([
      '--bug',
      'stale-read',
      '--nodes',
      '3',
      '--workload',
      'register',
    ]);
  });

  it("a simulated campaign's flags add the storage contract a switch needs: C3 for rename-without-dir-fsync", () => {
    for (const bug of KVRAFT_BUGS) {
      const config = configFromFlags(flagsOf(kvraftSimBugArgs(bug)));
      expect(config.bugs).toEqual([bug]);
      expect(config.sim?.contract).toBe(KVRAFT_BUG_NEEDS[bug].simContract ?? 'C2');
    }
    expect(kvraftSimBugArgs('rename-without-dir-fsync')).toContain('C3');
    expect(kvraftSimBugArgs('ack-before-fsync')).not.toContain('--sim-contract');
  });
});
