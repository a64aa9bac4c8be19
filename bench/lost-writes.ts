/**
 * Acknowledged writes lost to each `lose-unfsynced` of a run, from its history (register
 * workload): for every key, the first read after the node came back names the write that survived;
 * the writes to that key acknowledged after it and before the loss are lost. Prints, per loss,
 * how many were lost and how much time they span (from the last write that survived, on any key, to
 * the loss), then the totals.
 *
 *   npx tsx bench/lost-writes.ts RUN_DIR…
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

interface Op {
  readonly time: number;
  readonly type: 'invoke' | 'ok' | 'fail' | 'info';
  readonly process: number | string;
  readonly f: string;
  readonly value: unknown;
}

const NS_PER_S = 1e9;

interface Write {
  readonly key: string;
  readonly value: number;
  readonly okAt: number;
}

interface Loss {
  readonly atS: number;
  readonly lost: number;
  readonly keysRead: number;
  readonly spanS: number | null;
}

/** The value an ok op left in its key: a write's value, a cas's new value. */
function written(op: Op, invoke: Op): { key: string; value: number } | undefined {
  const [key, v] = invoke.value as [string, unknown];
  if (op.f === 'write' && typeof v === 'number') return { key, value: v };
  if (op.f === 'cas' && Array.isArray(v)) return { key, value: v[1] as number };
  return undefined;
}

function losses(ops: readonly Op[]): Loss[] {
  const invokes = new Map<number | string, Op>();
  const writes: Write[] = [];
  const reads: { key: string; value: unknown; invokedAt: number }[] = [];
  /** Writes and cas that may have taken effect (ok or info), by key, with their invocation time. */
  const writeInvokes: { key: string; at: number }[] = [];
  const events: { start: number; end: number }[] = [];
  let pending: number | undefined;
  for (const op of ops) {
    if (op.process === 'nemesis') {
      if (op.f !== 'lose-unfsynced') continue;
      if (pending === undefined) pending = op.time;
      else {
        events.push({ start: pending, end: op.time });
        pending = undefined;
      }
      continue;
    }
    if (op.type === 'invoke') {
      invokes.set(op.process, op);
      continue;
    }
    const invoke = invokes.get(op.process);
    if (invoke === undefined) continue;
    if (op.f !== 'read' && op.type !== 'fail') {
      writeInvokes.push({ key: (invoke.value as [string])[0], at: invoke.time });
    }
    if (op.type !== 'ok') continue;
    if (op.f === 'read') {
      const [key, value] = op.value as [string, unknown];
      reads.push({ key, value, invokedAt: invoke.time });
    } else {
      const w = written(op, invoke);
      if (w) writes.push({ ...w, okAt: op.time });
    }
  }
  return events.map(({ start, end }, i) => {
    const before = i > 0 ? events[i - 1].end : 0;
    const keys = new Set(writes.filter((w) => w.okAt < start && w.okAt > before).map((w) => w.key));
    let lost = 0;
    let keysRead = 0;
    let lastSurvivor = -Infinity;
    for (const key of keys) {
      const read = reads.find((r) => r.key === key && r.invokedAt > end);
      if (!read) continue;
      // A write invoked after the loss and before the read may be what it returned: no verdict.
      if (writeInvokes.some((w) => w.key === key && w.at > start && w.at < read.invokedAt)) continue;
      keysRead++;
      const acked = writes.filter((w) => w.key === key && w.okAt < start);
      const survivor = acked.findIndex((w) => w.value === read.value);
      if (survivor >= 0) lastSurvivor = Math.max(lastSurvivor, acked[survivor].okAt);
      lost += survivor >= 0 ? acked.length - 1 - survivor : 0;
    }
    return {
      atS: start / NS_PER_S,
      lost,
      keysRead,
      spanS: Number.isFinite(lastSurvivor) ? (start - lastSurvivor) / NS_PER_S : null,
    };
  });
}

for (const dir of process.argv.slice(2)) {
  const ops = readFileSync(join(dir, 'history.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Op);
  const found = losses(ops);
  console.log(dir);
  for (const l of found) {
    console.log(
      `  lose-unfsynced at ${l.atS.toFixed(1)} s: ${l.lost} acknowledged writes lost on ${l.keysRead} keys read back, the last ${l.spanS === null ? '?' : l.spanS.toFixed(2)} s before it`,
    );
  }
  const total = found.reduce((n, l) => n + l.lost, 0);
  console.log(
    `  total: ${total} writes lost in ${found.length} losses (${found.filter((l) => l.lost > 0).length} lost some)`,
  );
}
