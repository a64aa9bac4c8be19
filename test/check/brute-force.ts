import type { Op } from '../../src/core/op.js';
import type { Model } from '../../src/check/model.js';

interface PairedOp {
  readonly input: unknown;
  readonly output: unknown;
  readonly call: number;
  /** Infinity for info or unfinished ops, which need not be linearized. */
  readonly ret: number;
}

/**
 * The definition, by exhaustive search and nothing clever: some order of the completed ops (plus any
 * subset of info ops), respecting real time, is a legal sequential run of the model. Exponential:
 * for histories of a handful of ops only. Single partition.
 */
export function bruteForceLinearizable(ops: readonly Op[], model: Model): boolean {
  const paired: PairedOp[] = [];
  const open = new Map<number, { op: Op; position: number }>();
  ops.forEach((op, position) => {
    if (op.process === 'nemesis') return;
    if (op.type === 'invoke') {
      open.set(op.process, { op, position });
      return;
    }
    const invoke = open.get(op.process)!;
    open.delete(op.process);
    if (op.type === 'fail') return;
    paired.push({
      input: model.input(invoke.op.f, invoke.op.value),
      output: op.type === 'ok' ? model.output(op.f, op.value) : undefined,
      call: invoke.position,
      ret: op.type === 'ok' ? position : Infinity,
    });
  });
  for (const { op, position } of open.values()) {
    paired.push({ input: model.input(op.f, op.value), output: undefined, call: position, ret: Infinity });
  }
  const done = new Array<boolean>(paired.length).fill(false);
  const search = (state: unknown): boolean => {
    const pending = paired.filter((_, i) => !done[i]);
    if (pending.every((p) => p.ret === Infinity)) return true;
    const firstReturn = Math.min(...pending.map((p) => p.ret));
    for (let i = 0; i < paired.length; i++) {
      if (done[i] || paired[i].call > firstReturn) continue;
      const next = model.step(state, paired[i].input, paired[i].output);
      if (next === undefined) continue;
      done[i] = true;
      const found = search(next);
      done[i] = false;
      if (found) return true;
    }
    return false;
  };
  return search(model.init());
}
