import { describe, expect, it } from 'vitest';

import type { Op } from '../../../src/core/op.js';
import { HistoryBuilder } from '../../../src/check/_internals/history-builder.js';
import type { PartitionData } from '../../../src/check/_internals/partition.js';
import { StateSupply } from '../../../src/check/_internals/state-supply.js';
import { StateTable } from '../../../src/check/_internals/state-table.js';
import type { Model } from '../../../src/check/model.js';
import { modelByName } from '../../../src/check/models/by-name.js';

const model = modelByName('cas-register');

/** Register ops one after another, each [process, f, value, type]: slots in that order. */
function sequential(...steps: [number, string, unknown, Op['type']][]): PartitionData {
  return sequentialOn(model, steps);
}

/** Ops of `on` one after another. */
function sequentialOn(on: Model, steps: readonly [number, string, unknown, Op['type']][]): PartitionData {
  const builder = new HistoryBuilder(on);
  let index = 0;
  for (const [process, f, value, type] of steps) {
    builder.add({
      index: index++,
      time: index,
      type: 'invoke',
      process,
      f,
      value: f === 'read' ? null : value,
    });
    builder.add({ index: index++, time: index, type, process, f, value });
  }
  return builder.finish()[0].data(true);
}

describe('StateSupply', () => {
  it('refuses to leave a value a read still needs once no op left can write it again', () => {
    const partition = sequential([0, 'write', 1, 'ok'], [0, 'read', 1, 'ok'], [0, 'write', 2, 'ok']);
    const states = new StateTable(model);
    const supply = StateSupply.of(partition, model, states)!;
    const [nil, one, two] = [states.id(null), states.id(1), states.id(2)];
    expect(supply.take(0, nil, one)).toBe(true);
    expect(supply.take(2, one, two)).toBe(false);
    expect(supply.deadState).toBe(one);
    expect(supply.firstNeeding(one, -1)).toBe(1);
    expect(supply.needOf(1)).toBe(one);
    expect(supply.take(1, one, one)).toBe(true);
    expect(supply.take(2, one, two)).toBe(true);
    supply.restore(2);
    supply.restore(1);
    expect(supply.take(2, one, two)).toBe(false);
  });

  it('lets the value go while an op left (an info write) could write it again', () => {
    const partition = sequential(
      [0, 'write', 1, 'ok'],
      [1, 'write', 1, 'info'],
      [0, 'write', 2, 'ok'],
      [0, 'read', 1, 'ok'],
    );
    const states = new StateTable(model);
    const supply = StateSupply.of(partition, model, states)!;
    const [nil, one, two] = [states.id(null), states.id(1), states.id(2)];
    expect(supply.take(0, nil, one)).toBe(true);
    expect(supply.take(2, one, two)).toBe(true);
    expect(supply.take(1, two, one)).toBe(true);
    expect(supply.take(3, one, one)).toBe(true);
  });

  it('calls a state junk once no op left, info ops included, needs it; a write needs none', () => {
    const partition = sequential([0, 'write', 1, 'ok'], [1, 'cas', [1, 2], 'info'], [0, 'read', 3, 'ok']);
    const states = new StateTable(model);
    const supply = StateSupply.of(partition, model, states)!;
    const [nil, one, two, three] = [states.id(null), states.id(1), states.id(2), states.id(3)];
    expect([supply.isFree(0), supply.isFree(1), supply.isFree(2)]).toEqual([true, false, false]);
    expect([nil, one, two, three].map((state) => supply.isJunk(state))).toEqual([true, false, true, false]);
    expect(supply.take(1, one, two)).toBe(true);
    expect(supply.isJunk(one)).toBe(true);
    expect(supply.isJunk(states.id(99))).toBe(true);
  });

  it('is absent for a model that does not say which state an op needs', () => {
    const counter = modelByName('counter');
    const partition = sequentialOn(counter, [[0, 'add', 1, 'ok']]);
    expect(StateSupply.of(partition, counter, new StateTable(counter))).toBeUndefined();
  });
});
