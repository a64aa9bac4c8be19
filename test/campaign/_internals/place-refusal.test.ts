import { describe, expect, it } from 'vitest';

import { placementKind, refuseWhatThePlaceLacks } from '../../../src/campaign/_internals/place-refusal.js';
import { type RunConfig, RunConfigSchema } from '../../../src/campaign/config.js';
import type { FaultFamily } from '../../../src/core/fault.js';

const NODES = ['n1', 'n2', 'n3'];

function config(extra: Record<string, unknown>): RunConfig {
  return RunConfigSchema.parse({ system: 'kvraft', nodes: 3, seed: 1, timeMs: 60_000, ...extra });
}

function refusal(c: RunConfig): string | undefined {
  const wants = (family: FaultFamily): boolean => c.faults.includes(family);
  try {
    refuseWhatThePlaceLacks(c, NODES, wants);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

describe('refuseWhatThePlaceLacks', () => {
  const docker = { containers: { image: 'etcd:1' } };

  it('refuses in containers, by their runtime capabilities, the families, packet effects and checkpoints they lack', () => {
    expect(placementKind(config(docker))).toBe('docker');
    expect(refusal(config({ ...docker, faults: ['kill', 'member'] }))).toBe(
      '--faults member: not in containers (membership changes wipe data dirs in the containers, not done yet): choose from partition,kill,pause,packet',
    );
    expect(refusal(config({ ...docker, faults: ['clock'] }))).toMatch(
      /^--faults clock: not in containers \(clock faults need libfaketime preloaded in the containers, not done yet\)/,
    );
    expect(refusal(config({ ...docker, faults: ['disk'] }))).toMatch(/^--faults disk: not in containers/);
    expect(refusal(config({ ...docker, faults: ['partition', 'packet'], checkpoints: 0 }))).toBe(
      '--faults packet: in containers packet faults are loss only (iptables statistic rules), not delay: give --faults …,packet:loss',
    );
    expect(refusal(config({ ...docker, faults: ['kill'], checkpoints: 2 }))).toBe(
      '--checkpoints/--from-checkpoint: checkpoints of nodes in containers are not taken yet: give --checkpoints 0',
    );
    expect(refusal(config({ ...docker, faults: ['kill', 'pause'], checkpoints: 0 }))).toBeUndefined();
  });

  it('refuses nothing here, where the runtime can do everything', () => {
    const all = config({
      faults: ['partition', 'kill', 'pause', 'packet', 'member', 'clock', 'disk'],
      checkpoints: 2,
    });
    expect(placementKind(all)).toBe('local');
    expect(refusal(all)).toBeUndefined();
  });
});
