import { describe, expect, it } from 'vitest';

import { parseFaultsFlag } from '../../../src/cli/_internals/faults-flag.js';
import { RunConfigSchema } from '../../../src/campaign/config.js';
import { configFromFlags } from '../../../src/cli/run.js';

const BASE = {
  system: 'kvraft',
  time: '60s',
  policy: 'adaptive',
  workload: 'register',
  bug: [],
  store: 'store',
  network: 'auto',
};

describe('--faults FAMILY:TARGET', () => {
  it('keeps a family to the targets named, and leaves plain families whole', () => {
    expect(parseFaultsFlag('kill:one,kill:minority,partition')).toEqual({
      faults: ['kill', 'partition'],
      faultTargets: { kill: ['one', 'minority'] },
    });
    expect(parseFaultsFlag('partition:halves, pause:one')).toEqual({
      faults: ['partition', 'pause'],
      faultTargets: { partition: ['halves'], pause: ['one'] },
    });
  });

  it('plain family names work as before, and a plain name beside a kept one takes every target', () => {
    expect(parseFaultsFlag('partition,kill')).toEqual({ faults: ['partition', 'kill'], faultTargets: {} });
    expect(parseFaultsFlag('kill:one,kill')).toEqual({ faults: ['kill'], faultTargets: {} });
  });

  it('reaches the run config', () => {
    const config = configFromFlags({ ...BASE, faults: 'kill:one,packet' });
    expect(config.faults).toEqual(['kill', 'packet']);
    expect(config.faultTargets).toEqual({ kill: ['one'] });
    expect(configFromFlags({ ...BASE, faults: 'kill' }).faultTargets).toEqual({});
  });

  it('keeps packet faults to effects (packet:loss), and names the effects among the valid ones', () => {
    expect(parseFaultsFlag('partition,packet:loss')).toEqual({
      faults: ['partition', 'packet'],
      faultTargets: { packet: ['loss'] },
    });
    expect(() => parseFaultsFlag('packet:jitter')).toThrow(
      '--faults: unknown target "packet:jitter": packet takes packet:one, packet:minority, packet:majority, packet:all, packet:leader, packet:delay, packet:loss, packet:dup',
    );
  });

  it('refuses an unknown target in one line that lists the valid ones', () => {
    expect(() => parseFaultsFlag('kill:most')).toThrow(
      '--faults: unknown target "kill:most": kill takes kill:one, kill:minority, kill:majority, kill:all, kill:leader',
    );
    expect(() => parseFaultsFlag('partition:one')).toThrow(
      '--faults: unknown target "partition:one": partition takes partition:halves, partition:isolate, partition:majorities-ring, partition:bridge, partition:leader',
    );
    expect(() => parseFaultsFlag('kill:one:two')).toThrow('--faults: "kill:one:two" is not FAMILY:TARGET');
    expect(() => parseFaultsFlag('crash:one')).toThrow(
      /^--faults: unknown fault "crash:one": choose from partition, /,
    );
  });

  it('the config schema refuses the same for a run started from code', () => {
    const parsed = RunConfigSchema.safeParse({ faults: ['kill'], faultTargets: { kill: ['most'] } });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0].message).toBe(
      'unknown target "kill:most": kill takes kill:one, kill:minority, kill:majority, kill:all, kill:leader',
    );
    expect(RunConfigSchema.parse({ faultTargets: { kill: ['one'] } }).faultTargets).toEqual({
      kill: ['one'],
    });
  });
});
