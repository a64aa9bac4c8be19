import { describeLinks, linkFaultOf } from '../nemesis/grudge.js';
import {
  describeFault,
  describeTornGranularity,
  type Fault,
  type TornGranularity,
  type TornWriteParams,
} from '../core/fault.js';
import type { BugRecord } from '../campaign/bug.js';
import type { Progress, Reporter, RunSummary } from '../campaign/reporter.js';
import { describeAfterBudget, describeRunTiming } from '../core/run-timing.js';
import { describeRunVerdict } from '../core/verdict.js';
import type { FaultOutcome } from '../nemesis/nemesis.js';
import { describeCoverage } from './_internals/coverage-text.js';
import { invokedAs } from './_internals/invoked-as.js';
import { replayCommand } from '../core/replay-command.js';

const PLAIN_INTERVAL_MS = 10_000;

function clock(ms: number): string {
  const s = Math.floor(ms / 1000);
  return `${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
}

/** ms since the run started as `mm:ss.t`, the progress line's clock with tenths. */
function runClock(ms: number): string {
  const tenths = Math.floor(ms / 100);
  const s = Math.floor(tenths / 10);
  return `${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}.${tenths % 10}`;
}

/** A parameter of a packet, clock or disk fault as the terminal says it, by its key. */
const PARAM_TEXT: Readonly<Record<string, (v: number) => string>> = {
  lossPct: (v) => `loss ${v}%`,
  dupPct: (v) => `dup ${v}%`,
  delayMs: (v) => `delay ${v} ms`,
  deltaMs: (v) => `${v >= 0 ? '+' : ''}${v} ms`,
  rate: (v) => `rate ×${v}`,
  periodMs: (v) => `every ${v} ms`,
  seed: (v) => `seed ${v}`,
};

/**
 * A fault for a person: `start-packet:all loss 10%, delay 50 ms` rather than its value's JSON
 * (`describeFault`, the policy's key for it, is left as it is).
 */
function faultText(fault: Fault): string {
  const v = fault.value;
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return describeFault(fault);
  const { target, ...params } = v as { target?: unknown } & Record<string, unknown>;
  const where = Array.isArray(target)
    ? `[${target.join(',')}]`
    : typeof target === 'string'
      ? target
      : JSON.stringify(target ?? '');
  const said = Object.entries(params).map(([k, x]) =>
    typeof x === 'number' && PARAM_TEXT[k] !== undefined ? PARAM_TEXT[k](x) : `${k} ${JSON.stringify(x)}`,
  );
  return `${fault.f}:${where}${said.length > 0 ? ` ${said.join(', ')}` : ''}`;
}

/**
 * Fails from refused connections (a node down), counted apart from the other fails, said beside
 * them when there were any: `fail 2 + 37 refused`.
 */
function refusedText(refused: number | undefined): string {
  return refused !== undefined && refused > 0 ? ` + ${refused} refused` : '';
}

/** A fault whose outcome came this long after it began also says when it began. */
const SLOW_FAULT_MS = 1000;

function line(p: Progress): string {
  return (
    `[${clock(p.elapsedMs)}/${clock(p.budgetMs)}] schedule ${p.schedule + 1} step ${Math.min(p.step + 1, p.steps)}/${p.steps}` +
    ` ${p.phase} | ops ok ${p.ok} fail ${p.fail}${refusedText(p.refused)} info ${p.info} | faults ${p.faults}` +
    (p.states !== undefined ? ` | states ${p.states}` : '') +
    ` | bugs ${p.bugs}`
  );
}

/** Where a reporter's text goes: a terminal, a pipe or a file. */
export interface TextSink {
  write(text: string): unknown;
}

/** The live progress line on a terminal; plain lines (one every 10 s, faults, bugs) otherwise. */
export class ProgressReporter implements Reporter {
  private lastPlain = 0;
  private live = false;
  private members: readonly string[] = [];

  constructor(
    private readonly out: TextSink = process.stderr,
    private readonly tty = process.stderr.isTTY,
    /** The command the suggested replay, shrink and report lines start with. */
    private readonly command = invokedAs(),
  ) {}

  private print(text: string): void {
    if (this.live) this.out.write('\r\x1b[K');
    this.live = false;
    this.out.write(text + '\n');
  }

  runStarted(info: {
    runDir: string;
    system: string;
    seed: number;
    policy: string;
    nodes: readonly string[];
  }): void {
    this.members = info.nodes;
    this.print(
      `mallory: ${info.system} on ${info.nodes.length} nodes, policy ${info.policy}, seed ${info.seed}\n  run dir ${info.runDir}`,
    );
  }

  progress(p: Progress): void {
    if (this.tty) {
      this.out.write(`\r\x1b[K${line(p)}`);
      this.live = true;
    } else if (p.elapsedMs - this.lastPlain >= PLAIN_INTERVAL_MS) {
      this.lastPlain = p.elapsedMs;
      this.print(line(p));
    }
  }

  /**
   * Every fault, on a terminal too, with the reason for a skip or an error; at its time since the
   * run started, the clock of the progress line, the report and check.html.
   */
  fault(outcome: FaultOutcome, schedule: number, _atMs: number, runMs: number, doneRunMs = runMs): void {
    this.followMembership(outcome);
    const grudge = describeLinks(outcome.nodes, outcome.links, this.members, linkFaultOf(outcome.fault.f));
    const nodes =
      grudge !== undefined ? `: ${grudge}` : outcome.nodes.length > 0 ? ` on ${outcome.nodes.join(',')}` : '';
    const why = outcome.outcome !== 'ok' && outcome.error ? `: ${outcome.error}` : '';
    const torn = tornGranularityOf(outcome);
    const cut = torn !== undefined ? `, ${describeTornGranularity(torn)}` : '';
    const took =
      doneRunMs - runMs >= SLOW_FAULT_MS
        ? `, began ${runClock(runMs)}, took ${((doneRunMs - runMs) / 1000).toFixed(1)} s`
        : '';
    // Stamped when its outcome came, so the lines and the status line never go back in time.
    this.print(
      `  [${runClock(doneRunMs)}] schedule ${schedule + 1} ${faultText(outcome.fault)}${nodes} (${outcome.outcome}${cut}${took}${why})`,
    );
  }

  /** The cluster's members as the faults left them (a partition's bridge is a member it cut from none). */
  private followMembership(outcome: FaultOutcome): void {
    if (outcome.outcome !== 'ok') return;
    if (outcome.fault.f === 'member-add') this.members = [...new Set([...this.members, ...outcome.nodes])];
    if (outcome.fault.f === 'member-remove')
      this.members = this.members.filter((n) => !outcome.nodes.includes(n));
  }

  bug(bug: BugRecord): void {
    this.print(
      `BUG #${bug.id} [${bug.kind}] ${bug.message}\n  evidence: ${bug.dir}\n  replay:   ${replayCommand(this.command, bug.dir, bug.simulated !== undefined)}\n  shrink:   ${this.command} shrink ${bug.dir}`,
    );
  }

  message(text: string): void {
    this.print(text);
  }

  runEnded(s: RunSummary): void {
    const lines = [
      `mallory: ${s.status} after ${(s.elapsedMs / 1000).toFixed(1)} s — ${s.schedules} schedules, ` +
        `ops ok ${s.ops.ok} fail ${s.ops.fail}${refusedText(s.ops.refused)} info ${s.ops.info}, ${s.faults} faults, ${s.bugs.length} bugs`,
    ];
    if (s.timing !== undefined) lines.push(`  ${describeRunTiming(s.timing)}`);
    if (s.timing?.afterBudget !== undefined) {
      lines.push(`  ${describeAfterBudget(s.timing.budgetMs, s.timing.afterBudget)}`);
    }
    if (s.error !== undefined) lines.push(`  error: ${s.error}`);
    lines.push(`  verdict: ${describeRunVerdict(s.verdict)}`);
    for (const b of s.bugs) {
      const hits = b.hits ?? [];
      const again =
        hits.length > 1
          ? ` (${hits.length} hits: schedules ${hits.map((h) => h.schedule + 1).join(', ')})`
          : '';
      lines.push(`  bug #${b.id} [${b.kind}] schedule ${b.schedule + 1}${again}: ${b.message}`);
    }
    const speedup = s.metrics.sim_speedup;
    if (speedup !== undefined) {
      lines.push(
        `  simulated: ${s.metrics.sim_virtual_s} virtual s in ${s.metrics.sim_wall_s} wall s (${speedup}× real time)`,
      );
    }
    const coverage = describeCoverage(s.metrics);
    if (coverage !== undefined) lines.push(`  ${coverage}`);
    lines.push(`  run dir: ${s.runDir}`);
    if (s.report !== undefined) lines.push(`  report:  ${s.report}`);
    if (s.reportError !== undefined)
      lines.push(`  report:  not written (${s.reportError}); retry: ${this.command} report ${s.runDir}`);
    this.print(lines.join('\n'));
  }
}

/** How finely a torn-write cut, as the nemesis recorded it; undefined for any other fault. */
function tornGranularityOf(outcome: FaultOutcome): TornGranularity | undefined {
  const v = outcome.value;
  if (outcome.fault.f !== 'torn-write' || typeof v !== 'object' || v === null || Array.isArray(v))
    return undefined;
  return (v as Partial<TornWriteParams>).granularity;
}
