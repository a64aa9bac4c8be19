/**
 * Events-ingest benchmark: log line → Drain → timeline → abstractions (artifact + causal) →
 * coverage, for 1M synthetic events from 5 nodes (raft-like text and zap-JSON log lines, probe
 * events, network send/recv pairs), cut into windows of 10,000 events. Prints events/s for the
 * ingest path alone and end to end, the per-window abstraction time, and the heap as events flow
 * (flat = the timeline drops closed windows). `npx tsx --expose-gc bench/ingest.ts [events]`.
 */
import { Coverage } from '../src/abstraction/coverage.js';
import type { Event } from '../src/core/event.js';
import { Rng } from '../src/core/random.js';
import { LogEvents } from '../src/observe/log-events.js';
import { parseProbeLine } from '../src/observe/probe-events.js';
import { Timeline } from '../src/timeline/timeline.js';

const TOTAL_EVENTS = Number(process.argv[2] ?? 1_000_000);
const EVENTS_PER_WINDOW = 10_000;
const NODES = ['n1', 'n2', 'n3', 'n4', 'n5'];
const TS_STEP_NS = 250_000; // 10,000 events per 2.5 s window
const MB = 1024 * 1024;

const rng = new Rng(42);
const hex = (): string => rng.nextU32().toString(16).padStart(8, '0');
const sec = (): string => String(rng.int(60)).padStart(2, '0');

const TEXT_LINES: readonly (() => string)[] = [
  () =>
    `2026-11-29T08:19:${sec()}.${rng.int(1000)}Z INFO raft: ${hex()} became follower at term ${rng.int(50)}`,
  () => `2026-11-29T08:19:${sec()}Z INFO raft: ${hex()} became leader at term ${rng.int(50)}`,
  () =>
    `2026-11-29T08:19:${sec()}Z DEBUG replication: append entries to 10.0.0.${rng.int(6)}:2380 prev_index=${rng.int(1e6)} n=${rng.int(64)}`,
  () => `2026-11-29T08:19:${sec()}Z DEBUG replication: leader_commit=${rng.int(1e6)} applied=${rng.int(1e6)}`,
  () => `2026-11-29T08:19:${sec()}Z WARN election: timeout after ${rng.int(3000)}ms, starting election`,
  () =>
    `2026-11-29T08:19:${sec()}Z INFO snapshot: taken at index ${rng.int(1e6)} in /data/n${rng.int(5)}/snap/${hex()}.snap`,
  () =>
    `I1129 08:19:35.${rng.int(1e6)}   ${rng.int(99999)} raft.go:${rng.int(900)}] vote granted to ${hex()} for term ${rng.int(50)}`,
  () => `2026/11/29 08:19:35.${rng.int(1e6)} request ${hex()}-${hex()} done in ${rng.int(900)}us`,
];

const JSON_LINES: readonly (() => string)[] = [
  () =>
    JSON.stringify({
      level: 'info',
      ts: 1.7e9 + rng.next(),
      caller: 'raft/raft.go:700',
      msg: `${hex()} received MsgVoteResp from ${hex()} at term ${rng.int(50)}`,
    }),
  () =>
    JSON.stringify({
      level: 'warn',
      ts: 1.7e9 + rng.next(),
      msg: `lost leader ${hex()} at term ${rng.int(50)}`,
    }),
  () =>
    JSON.stringify({ level: 'debug', ts: 1.7e9 + rng.next(), msg: `applied entries up to ${rng.int(1e6)}` }),
];

const PROBE_TYPES = ['tick', 'append', 'apply', 'vote', 'become-follower', 'commit'];

interface Source {
  readonly kind: 'log' | 'probe' | 'net';
  readonly node: string;
  readonly line?: string;
  readonly event?: Event;
}

let msgSeq = 0;
let pendingRecv: Event | undefined;

function next(ts: number): Source {
  const node = NODES[rng.int(NODES.length)];
  if (pendingRecv) {
    const e = { ...pendingRecv, ts };
    pendingRecv = undefined;
    return { kind: 'net', node: e.node, event: e };
  }
  const r = rng.next();
  if (r < 0.5) return { kind: 'log', node, line: rng.pick(TEXT_LINES)() };
  if (r < 0.7) return { kind: 'log', node, line: rng.pick(JSON_LINES)() };
  if (r < 0.85) {
    const type = rng.pick(PROBE_TYPES);
    return { kind: 'probe', node, line: JSON.stringify({ ts, type, attrs: { term: rng.int(50) } }) };
  }
  const peer = NODES[rng.int(NODES.length)];
  const msg = `m${msgSeq++}`;
  pendingRecv = { ts, node: peer, source: 'net', type: 'recv', attrs: { peer: node, msg, bytes: 100 } };
  return {
    kind: 'net',
    node,
    event: { ts, node, source: 'net', type: 'send', attrs: { peer, msg, bytes: 100 } },
  };
}

function heapMb(): number {
  globalThis.gc?.();
  return process.memoryUsage().heapUsed / MB;
}

function run(withAbstraction: boolean): { seconds: number; heap: [number, number][]; windowMs: number[] } {
  const logs = new LogEvents();
  const timeline = new Timeline({ graceMs: 0, now: () => 0 });
  const coverage = new Coverage();
  const heap: [number, number][] = [];
  const windowMs: number[] = [];
  const checkpoints = new Set([100_000, 250_000, 500_000, 750_000, TOTAL_EVENTS]);
  let window = 0;
  let ts = 0;
  // Build the inputs outside the timed loop in batches, so generation is not measured.
  let elapsed = 0;
  const BATCH = EVENTS_PER_WINDOW;
  for (let done = 0; done < TOTAL_EVENTS; done += BATCH) {
    const batch: Source[] = [];
    for (let i = 0; i < BATCH; i++) batch.push(next((ts += TS_STEP_NS)));
    const t0 = performance.now();
    for (const s of batch) {
      const e =
        s.kind === 'log'
          ? logs.toEvent(s.node, s.line!, ts)
          : s.kind === 'probe'
            ? parseProbeLine(s.node, s.line!)
            : s.event;
      if (e) timeline.ingest(e);
    }
    const w0 = performance.now();
    const win = timeline.cut(
      window,
      window * BATCH * TS_STEP_NS,
      (window + 1) * BATCH * TS_STEP_NS + TS_STEP_NS,
    );
    if (withAbstraction) coverage.observe(win, null);
    const t1 = performance.now();
    windowMs.push(t1 - w0);
    elapsed += t1 - t0;
    window++;
    if (checkpoints.has(done + BATCH)) heap.push([done + BATCH, heapMb()]);
  }
  if (withAbstraction) {
    console.log(
      `  coverage: ${JSON.stringify(coverage.snapshot())}; templates mined: ${logs.drain.templates().length}`,
    );
  }
  return { seconds: elapsed / 1000, heap, windowMs };
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
}

console.log(
  `ingest benchmark: ${TOTAL_EVENTS} events, ${NODES.length} nodes, ${EVENTS_PER_WINDOW} events/window, gc ${globalThis.gc ? 'exposed' : 'not exposed (run with --expose-gc for exact heap)'}`,
);
for (const withAbstraction of [false, true]) {
  const label = withAbstraction
    ? 'line → Drain → timeline → artifact + causal + coverage'
    : 'line → Drain → timeline (cut windows)';
  const r = run(withAbstraction);
  console.log(
    `${label}: ${Math.round(TOTAL_EVENTS / r.seconds).toLocaleString('en')} events/s (${r.seconds.toFixed(2)} s)`,
  );
  console.log(
    `  per-window cut${withAbstraction ? ' + abstraction' : ''}: p50 ${pct(r.windowMs, 0.5).toFixed(2)} ms, p99 ${pct(r.windowMs, 0.99).toFixed(2)} ms, max ${Math.max(...r.windowMs).toFixed(2)} ms`,
  );
  console.log(`  heap used: ${r.heap.map(([n, mb]) => `${n / 1000}k ${mb.toFixed(1)} MB`).join(', ')}`);
}
