import { appendFileSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { NodeExit } from '../../src/cluster/cluster.js';
import { type InducedCause, LogCheck } from '../../src/check/logs.js';
import { etcd } from '../../src/systems/etcd/etcd.js';
import { kvraft } from '../../src/systems/kvraft/index.js';
import { redis } from '../../src/systems/redis/redis.js';

const adapter = etcd.create({ bugs: [] });
const kvraftAdapter = kvraft.create({ bugs: [] });
const redisAdapter = redis.create({ bugs: [] });
// What redis 7.0.15 printed when a replica's AOF write failed under disk-full: its panic report,
// whose fast memory test then died by SIGSEGV (the log stops there, no `BUG REPORT END`).
const REDIS_PANIC = [
  '21003:S 07 Dec 2026 07:05:14.300 # Error writing to the AOF file: No space left on device',
  '=== REDIS BUG REPORT START: Cut & paste starting from here ===',
  '21003:S 07 Dec 2026 07:05:14.349 # !!! Software Failure. Press left mouse button to continue',
  '21003:S 07 Dec 2026 07:05:14.349 # Guru Meditation: Replica was unable to write command to disk. #server.c:3890',
  '------ STACK TRACE ------',
  '*** Preparing to test memory region 558163be5000 (126976 bytes)',
  '*** Preparing to test memory region 7f8375b53000 (8192 bytes)',
];
// What etcd 3.4 printed for a joiner started before its cluster listed it (ids shortened).
const REFUSAL = [
  '{"level":"warn","ts":"2026-11-30T20:35:46.277Z","caller":"etcdmain/etcd.go:176","msg":"failed to start etcd","error":"error validating peerURLs {ClusterID:c6f2987407196338 Members:[&{ID:3da1c07419fcbd0}]}: member count is unequal"}',
  '{"level":"fatal","ts":"2026-11-30T20:35:46.277Z","caller":"etcdmain/etcd.go:271","msg":"discovery failed","error":"error validating peerURLs {ClusterID:c6f2987407196338 Members:[&{ID:3da1c07419fcbd0}]}: member count is unequal"}',
];

const REMOVED =
  '{"level":"warn","ts":"2026-11-30T20:44:13.063Z","caller":"etcdserver/server.go:1078","msg":"server error","error":"the member has been permanently removed from the cluster"}';

// What etcd 3.4 printed when its WAL write answered ENOSPC (the stack trace cut).
const ENOSPC_FATAL =
  '{"level":"fatal","ts":"2026-12-07T06:05:20.483Z","caller":"etcdserver/raft.go:264","msg":"failed to save Raft hard state and entries","error":"write /dev/shm/mallory-mxcv8q3qcri/n1/etcd/member/wal/0000000000000000-0000000000000000.wal: no space left on device"}';

function exit(node: string, expected: boolean): NodeExit {
  return { node, code: 1, signal: null, expected, ts: 0, wallMs: 0 };
}

describe('LogCheck', () => {
  let runDir: string;
  const write = (node: string, lines: readonly string[]): void => {
    mkdirSync(join(runDir, 'nodes', node), { recursive: true });
    appendFileSync(join(runDir, 'nodes', node, 'stderr.log'), lines.map((l) => `${l}\n`).join(''));
  };
  const size = (node: string): number => statSync(join(runDir, 'nodes', node, 'stderr.log')).size;
  beforeEach(() => {
    runDir = mkdtempSync(join(tmpdir(), 'mallory-logs-test-'));
  });
  afterEach(() => {
    rmSync(runDir, { recursive: true, force: true });
  });

  it('a joiner refusing its configuration is no finding: one membership exit, no crash text', () => {
    const check = new LogCheck(runDir, adapter.crashPatterns, adapter.membershipExitPatterns);
    write('n3', ['{"level":"info","msg":"starting an etcd server"}', ...REFUSAL]);

    const findings = check.scan(['n1', 'n3'], [exit('n3', false)]);

    expect(findings.map((f) => [f.node, f.kind])).toEqual([['n3', 'membership-exit']]);
    expect(findings[0].message).toContain('error validating peerURLs');
  });

  it('a member that stops on learning it was removed, before the nemesis kills it, is no finding', () => {
    const check = new LogCheck(runDir, adapter.crashPatterns, adapter.membershipExitPatterns);
    write('n1', [REMOVED, '{"level":"info","msg":"stopping remote peer"}']);

    const findings = check.scan(['n1'], [{ ...exit('n1', false), code: 0 }]);

    expect(findings.map((f) => [f.node, f.kind])).toEqual([['n1', 'membership-exit']]);
  });

  it('the same line followed by the nemesis killing the node leaves nothing behind', () => {
    const check = new LogCheck(runDir, adapter.crashPatterns, adapter.membershipExitPatterns);
    write('n1', [REMOVED]);
    expect(check.scan(['n1'], [exit('n1', true)])).toEqual([]);
    write('n1', ['{"level":"info","msg":"starting an etcd server"}']);

    const kinds = check.scan(['n1'], [exit('n1', false)]).map((f) => f.kind);

    expect(kinds).toEqual(['unexpected-exit']);
  });

  it("a line is the exit's reason only if its process wrote it: an earlier process's kill does not take it", () => {
    const check = new LogCheck(runDir, adapter.crashPatterns, adapter.membershipExitPatterns);
    write('n3', ['{"level":"info","msg":"the member the nemesis removes and kills"}']);
    const killed = { ...exit('n3', true), logBytes: { 'stderr.log': size('n3') } };
    write('n3', ['{"level":"info","msg":"starting an etcd server"}', ...REFUSAL]);
    const refused = { ...exit('n3', false), logBytes: { 'stderr.log': size('n3') } };

    const kinds = check.scan(['n3'], [killed, refused]).map((f) => f.kind);

    expect(kinds).toEqual(['membership-exit']);
  });

  it("a killed process's reason does not excuse the next process's exit", () => {
    const check = new LogCheck(runDir, adapter.crashPatterns, adapter.membershipExitPatterns);
    write('n1', [REMOVED]);
    const killed = { ...exit('n1', true), logBytes: { 'stderr.log': size('n1') } };
    write('n1', ['{"level":"info","msg":"starting an etcd server"}']);
    const crashed = { ...exit('n1', false), logBytes: { 'stderr.log': size('n1') } };

    const kinds = check.scan(['n1'], [killed, crashed]).map((f) => f.kind);

    expect(kinds).toEqual(['unexpected-exit']);
  });

  it('without membership-exit patterns the same output is a crash and an unexpected exit', () => {
    const check = new LogCheck(runDir, adapter.crashPatterns);
    write('n3', REFUSAL);

    const kinds = check.scan(['n3'], [exit('n3', false)]).map((f) => f.kind);

    expect(kinds).toEqual(['crash-text', 'unexpected-exit']);
  });

  it('a later exit of the node that refused is reported as any other', () => {
    const check = new LogCheck(runDir, adapter.crashPatterns, adapter.membershipExitPatterns);
    write('n3', REFUSAL);
    check.scan(['n3'], [exit('n3', false)]);
    write('n3', ['{"level":"fatal","msg":"something else"}']);

    const kinds = check.scan(['n3'], [exit('n3', false)]).map((f) => f.kind);

    expect(kinds).toEqual(['crash-text', 'unexpected-exit']);
  });

  it('an exit the nemesis induced (its disk failing) is no crash, and says its cause', () => {
    const check = new LogCheck(runDir, kvraftAdapter.crashPatterns);
    write('n1', ['kvraft n1: stopping: the disk refused to fsync log.jsonl (EIO: i/o error, fsync)']);
    const cause = (e: NodeExit): InducedCause | undefined =>
      e.node === 'n1' ? { cause: 'fsync-error (fsync answering EIO)' } : undefined;

    const findings = check.scan(['n1'], [exit('n1', false), exit('n2', false)], cause);

    expect(findings.map((f) => [f.node, f.kind])).toEqual([
      ['n1', 'induced-exit'],
      ['n2', 'unexpected-exit'],
    ]);
    expect(findings[0].message).toBe(
      'n1 stopped (code 1) while fsync-error (fsync answering EIO) was in effect on its disk',
    );
  });

  it("an exit put down to the run's stop signal is no crash; the others stay crashes", () => {
    const check = new LogCheck(runDir, kvraftAdapter.crashPatterns);
    const stopped = { ...exit('n1', false), code: 0 };

    const findings = check.scan(['n1', 'n2'], [stopped, exit('n2', false)], undefined, (e) =>
      e.node === 'n1' ? 'SIGTERM' : undefined,
    );

    expect(findings.map((f) => [f.node, f.kind])).toEqual([
      ['n1', 'stop-exit'],
      ['n2', 'unexpected-exit'],
    ]);
    expect(findings[0].message).toBe("n1 exited with the run's stop signal (code 0; the run got SIGTERM)");
  });

  it("an induced exit's own crash text (a fail-stop's fatal line) is its evidence, not a finding", () => {
    const check = new LogCheck(runDir, adapter.crashPatterns, adapter.membershipExitPatterns);
    write('n1', ['{"level":"info","msg":"serving"}']);
    const fromBytes = { 'stderr.log': size('n1') };
    write('n1', [ENOSPC_FATAL]);
    const stopped = { ...exit('n1', false), logBytes: { 'stderr.log': size('n1') } };

    const findings = check.scan(['n1'], [stopped], () => ({ cause: 'disk-full', fromBytes }));

    expect(findings.map((f) => f.kind)).toEqual(['induced-exit']);
    expect(findings[0].message).toBe(
      `n1 stopped (code 1) while disk-full was in effect on its disk; it said: ${ENOSPC_FATAL.slice(0, 300)}`,
    );
    expect(findings[0].lines).toContain(ENOSPC_FATAL);
  });

  it('without the log sizes at the fault, the crash text of the exited process is taken (kvraft stopping on EIO)', () => {
    const check = new LogCheck(runDir, kvraftAdapter.crashPatterns);
    write('n1', ['Error: EIO: i/o error, fsync', '    at Object.fsyncSync (node:fs:1234:3)']);

    const kinds = check
      .scan(['n1'], [exit('n1', false)], () => ({ cause: 'fsync-error' }))
      .map((f) => f.kind);

    expect(kinds).toEqual(['induced-exit']);
  });

  it('an induced exit names the disk fault it is put down to (a death under disk-full drops data)', () => {
    const check = new LogCheck(runDir, kvraftAdapter.crashPatterns);
    write('n1', ['Error: ENOSPC: no space left on device, write']);
    const [finding] = check.scan(['n1'], [exit('n1', false)], () => ({
      cause: 'disk-full (writes answering ENOSPC)',
      diskFault: 'disk-full',
    }));
    expect(finding).toMatchObject({ kind: 'induced-exit', diskFault: 'disk-full' });
  });

  it('crash text written before the fault began, or by the process started after the exit, stays a finding', () => {
    const check = new LogCheck(runDir, adapter.crashPatterns, adapter.membershipExitPatterns);
    write('n1', ['panic: an old bug']);
    const fromBytes = { 'stderr.log': size('n1') };
    write('n1', [ENOSPC_FATAL]);
    const stopped = { ...exit('n1', false), logBytes: { 'stderr.log': size('n1') } };
    write('n1', ['panic: a bug of the restarted process']);

    const findings = check.scan(['n1'], [stopped], () => ({ cause: 'disk-full', fromBytes }));

    expect(findings.map((f) => [f.kind, f.message])).toEqual([
      ['crash-text', 'n1 stderr.log: panic: an old bug'],
      ['crash-text', 'n1 stderr.log: panic: a bug of the restarted process'],
      ['induced-exit', expect.stringContaining('it said: {"level":"fatal"') as string],
    ]);
  });

  it("a later induced exit does not take the crash text of an earlier process's crash under the same fault", () => {
    const check = new LogCheck(runDir, adapter.crashPatterns, adapter.membershipExitPatterns);
    const fromBytes = { 'stderr.log': 0 };
    write('n1', ['panic: runtime error: invalid memory address']);
    const segv = {
      ...exit('n1', false),
      code: null,
      signal: 'SIGSEGV' as const,
      logBytes: { 'stderr.log': size('n1') },
    };
    write('n1', [ENOSPC_FATAL]);
    const stopped = { ...exit('n1', false), logBytes: { 'stderr.log': size('n1') } };

    const findings = check.scan(['n1'], [segv, stopped], () => ({ cause: 'disk-full', fromBytes }));

    expect(findings.map((f) => f.kind)).toEqual(['crash-text', 'unexpected-exit', 'induced-exit']);
    expect(findings[0].message).toBe('n1 stderr.log: panic: runtime error: invalid memory address');
  });

  it('a memory error is never a fail-stop: its text and a SIGSEGV exit stay findings under a failing disk', () => {
    const check = new LogCheck(runDir, kvraftAdapter.crashPatterns);
    write('n1', ['Segmentation fault (core dumped)']);
    write('n2', ['==12==ERROR: AddressSanitizer: heap-use-after-free']);
    const segv = { ...exit('n1', false), code: null, signal: 'SIGSEGV' as const };

    const findings = check.scan(['n1', 'n2'], [segv, exit('n2', false)], () => ({ cause: 'fsync-error' }));

    expect(findings.map((f) => [f.node, f.kind])).toEqual([
      ['n1', 'crash-text'],
      ['n2', 'crash-text'],
      ['n1', 'unexpected-exit'],
      ['n2', 'induced-exit'],
    ]);
  });

  it('a fail-stop line written under a failing disk as the nemesis killed the node is an induced exit, not a crash', () => {
    // etcd wrote its ENOSPC fatal line 4 ms before the kill the schedule had next (etcd, seed 3):
    // the process was stopping itself as the nemesis stopped it.
    const check = new LogCheck(runDir, adapter.crashPatterns, adapter.membershipExitPatterns);
    write('n1', ['{"level":"info","msg":"serving"}']);
    const fromBytes = { 'stderr.log': size('n1') };
    write('n1', [ENOSPC_FATAL]);
    const killed = {
      ...exit('n1', true),
      code: null,
      signal: 'SIGKILL' as const,
      logBytes: { 'stderr.log': size('n1') },
    };

    const findings = check.scan(['n1'], [killed], () => ({ cause: 'disk-full', fromBytes }));

    expect(findings.map((f) => f.kind)).toEqual(['induced-exit']);
    expect(findings[0].message).toBe(
      `n1 stopped (signal SIGKILL, the nemesis stopping it) while disk-full was in effect on its disk; it said: ${ENOSPC_FATAL.slice(0, 300)}`,
    );
    expect(findings[0].lines).toContain(ENOSPC_FATAL);
  });

  it('a killed process keeps as findings its crash text from before the fault, a memory error, and any with no fault in effect', () => {
    const check = new LogCheck(runDir, adapter.crashPatterns, adapter.membershipExitPatterns);
    write('n1', ['panic: an old bug']);
    const fromBytes = { 'stderr.log': size('n1') };
    write('n1', ['Segmentation fault (core dumped)']);
    const killed = { ...exit('n1', true), logBytes: { 'stderr.log': size('n1') } };
    write('n2', [ENOSPC_FATAL]);

    const findings = check.scan(['n1', 'n2'], [killed, exit('n2', true)], (e) =>
      e.node === 'n1' ? { cause: 'disk-full', fromBytes } : undefined,
    );

    expect(findings.map((f) => [f.node, f.kind, f.message])).toEqual([
      ['n1', 'crash-text', 'n1 stderr.log: panic: an old bug'],
      ['n1', 'crash-text', 'n1 stderr.log: Segmentation fault (core dumped)'],
      ['n2', 'crash-text', `n2 stderr.log: ${ENOSPC_FATAL.slice(0, 300)}`],
    ]);
  });

  it("an exit just after the harness cut the node's connections is induced, unless its process wrote crash text", () => {
    // What dqlite-demo printed (seed 3) when a delay fault's redirect cut its start-up connection.
    const check = new LogCheck(runDir, adapter.crashPatterns);
    write('n1', ['Error: failed to open database: call open (budget 0s): receive: header: EOF', 'Usage:']);
    write('n2', ['panic: runtime error: index out of range']);
    const cut: InducedCause = {
      cause: 'just after the harness cut its connections (a delay through the proxy)',
      by: 'connection-cut',
    };

    const findings = check.scan(['n1', 'n2'], [exit('n1', false), exit('n2', false)], () => cut);

    expect(findings.map((f) => [f.node, f.kind, f.message])).toEqual([
      ['n2', 'crash-text', 'n2 stderr.log: panic: runtime error: index out of range'],
      [
        'n1',
        'induced-exit',
        'n1 stopped (code 1) just after the harness cut its connections (a delay through the proxy)',
      ],
      ['n2', 'unexpected-exit', 'n2 exited by itself (code 1)'],
    ]);
  });

  it("an exit by a signal (or a shell's 128 + n) just after a connection cut stays unexpected: a reset connection excuses no abort or kill", () => {
    const check = new LogCheck(runDir, kvraftAdapter.crashPatterns);
    for (const node of ['n1', 'n2', 'n3']) write(node, ['2026-12-01T00:00:00.000Z serving']);
    const cut: InducedCause = { cause: 'just after the harness cut its connections', by: 'connection-cut' };
    const exits: NodeExit[] = [
      { ...exit('n1', false), code: null, signal: 'SIGABRT' },
      { ...exit('n2', false), code: null, signal: 'SIGKILL' },
      { ...exit('n3', false), code: 134 },
    ];

    const findings = check.scan(['n1', 'n2', 'n3'], exits, () => cut);

    expect(findings.map((f) => [f.node, f.kind, f.message])).toEqual([
      ['n1', 'unexpected-exit', 'n1 exited by itself (signal SIGABRT)'],
      ['n2', 'unexpected-exit', 'n2 exited by itself (signal SIGKILL)'],
      ['n3', 'unexpected-exit', 'n3 exited by itself (code 134)'],
    ]);
  });

  it('an exit the nemesis asked for, with no crash text, is neither', () => {
    const check = new LogCheck(runDir, kvraftAdapter.crashPatterns);
    write('n1', ['2026-12-01T00:00:00.000Z n1 node-start term=1']);

    expect(check.scan(['n1'], [exit('n1', true)], () => ({ cause: 'disk-full' }))).toEqual([]);
  });

  it("an exit's lines are its process's last lines, not those of the process the reset started after it", () => {
    const check = new LogCheck(runDir, adapter.crashPatterns, adapter.membershipExitPatterns);
    write('n2', ['{"level":"info","msg":"serving"}', '{"level":"warn","msg":"the last words"}']);
    const crashed = { ...exit('n2', false), logBytes: { 'stderr.log': size('n2') } };
    write('n2', ['{"level":"info","msg":"starting an etcd server"}', '{"level":"info","msg":"restarted"}']);

    const [finding] = check.scan(['n2'], [crashed]);

    expect(finding.kind).toBe('unexpected-exit');
    expect(finding.lines).toEqual([
      '{"level":"info","msg":"serving"}',
      '{"level":"warn","msg":"the last words"}',
    ]);
  });
  describe('a memory fault while writing the crash report an induced fault started (redis)', () => {
    const segv = (node: string): NodeExit => ({
      ...exit(node, false),
      code: null,
      signal: 'SIGSEGV',
      logBytes: { 'stderr.log': size(node) },
    });

    it('is the induced exit, its report the evidence: no crash text, no unexpected exit', () => {
      const check = new LogCheck(runDir, redisAdapter.crashPatterns);
      write('n2', ['21003:S 07 Dec 2026 07:05:10.978 * Successful partial resynchronization with master.']);
      const fromBytes = { 'stderr.log': size('n2') };
      write('n2', REDIS_PANIC);

      const findings = check.scan(['n2'], [segv('n2')], () => ({ cause: 'disk-full', fromBytes }));

      expect(findings.map((f) => f.kind)).toEqual(['induced-exit']);
      expect(findings[0].message).toBe(
        'n2 stopped (signal SIGSEGV) while writing the crash report that disk-full on its disk made it start; it said: === REDIS BUG REPORT START: Cut & paste starting from here ===',
      );
      expect(findings[0].lines).toContain(REDIS_PANIC[3]);
    });

    it('with no induced fault, the same report and SIGSEGV stay findings', () => {
      const check = new LogCheck(runDir, redisAdapter.crashPatterns);
      write('n2', REDIS_PANIC);

      const kinds = check.scan(['n2'], [segv('n2')]).map((f) => f.kind);

      expect(kinds).toEqual(['crash-text', 'crash-text', 'unexpected-exit']);
    });

    it('a report begun before the fault stays a finding, and so does the SIGSEGV', () => {
      const check = new LogCheck(runDir, redisAdapter.crashPatterns);
      write('n2', REDIS_PANIC);
      const fromBytes = { 'stderr.log': size('n2') };

      const kinds = check
        .scan(['n2'], [segv('n2')], () => ({ cause: 'disk-full', fromBytes }))
        .map((f) => f.kind);

      expect(kinds).toEqual(['crash-text', 'crash-text', 'unexpected-exit']);
    });

    it('a later process that dies by SIGSEGV without a report of its own is a finding', () => {
      const check = new LogCheck(runDir, redisAdapter.crashPatterns);
      const fromBytes = { 'stderr.log': 0 };
      write('n2', REDIS_PANIC);
      const first = segv('n2');
      write('n2', ['21100:S 07 Dec 2026 07:05:16.000 * Ready to accept connections']);

      const findings = check.scan(['n2'], [first, segv('n2')], () => ({ cause: 'disk-full', fromBytes }));

      expect(findings.map((f) => f.kind)).toEqual(['induced-exit', 'unexpected-exit']);
    });

    it("a report that is the signal's own (redis's SIGSEGV handler) is no induced exit", () => {
      const check = new LogCheck(runDir, redisAdapter.crashPatterns);
      const fromBytes = { 'stderr.log': 0 };
      write('n2', [
        '21003:S 07 Dec 2026 07:05:14.300 # Error writing to the AOF file: Input/output error',
        '21003:S 07 Dec 2026 07:05:14.349 # Redis 7.0.15 crashed by signal: 11, si_code: 1',
        '=== REDIS BUG REPORT START: Cut & paste starting from here ===',
      ]);

      const kinds = check
        .scan(['n2'], [segv('n2')], () => ({ cause: 'fsync-error', fromBytes }))
        .map((f) => f.kind);

      expect(kinds).toEqual(['crash-text', 'crash-text', 'unexpected-exit']);
    });

    it('a report begun within the grace after the heal, its memory test ended by SIGSEGV after it, is the induced exit', () => {
      const check = new LogCheck(runDir, redisAdapter.crashPatterns);
      const fromBytes = { 'stderr.log': 0 };
      write('n2', ['21003:S 07 Dec 2026 07:05:13.300 # Fail to fsync the AOF file: Input/output error']);
      write('n2', REDIS_PANIC);
      // The grace ended while the memory test ran; the exit came after it (no window at the exit).
      const untilBytes = { 'stderr.log': size('n2') - 10 };
      const inGrace = { cause: 'fsync-error', fromBytes, untilBytes };

      const findings = check.scan(
        ['n2'],
        [segv('n2')],
        () => undefined,
        () => undefined,
        () => [inGrace],
      );

      expect(findings.map((f) => f.kind)).toEqual(['induced-exit']);
      expect(findings[0].message).toContain(
        'while writing the crash report that fsync-error on its disk made it start',
      );
    });

    it('an abort after the grace, by a process writing the report it began within the grace, is the induced exit', () => {
      const check = new LogCheck(runDir, redisAdapter.crashPatterns);
      const fromBytes = { 'stderr.log': 0 };
      write('n2', [
        '6372:S 07 Dec 2026 10:06:01.856 # Replica is applying a command even though it is unable to write to disk.',
      ]);
      write('n2', REDIS_PANIC);
      const untilBytes = { 'stderr.log': size('n2') - 10 };
      const abort: NodeExit = { ...segv('n2'), signal: 'SIGABRT' };
      const cause = { cause: 'disk-full', fromBytes, untilBytes };

      expect(
        check
          .scan(
            ['n2'],
            [abort],
            () => undefined,
            () => undefined,
            () => [cause],
          )
          .map((f) => f.kind),
      ).toEqual(['induced-exit']);
      // Begun after the grace: the report and the abort stay findings.
      const late = new LogCheck(runDir, redisAdapter.crashPatterns);
      const kinds = late
        .scan(
          ['n2'],
          [abort],
          () => undefined,
          () => undefined,
          () => [{ ...cause, untilBytes: fromBytes }],
        )
        .map((f) => f.kind);
      expect(kinds).toEqual(['crash-text', 'crash-text', 'unexpected-exit']);
    });

    it('a report begun after the grace ended stays a finding, and so does its SIGSEGV', () => {
      const check = new LogCheck(runDir, redisAdapter.crashPatterns);
      const fromBytes = { 'stderr.log': 0 };
      write('n2', ['21003:S 07 Dec 2026 07:05:13.300 # Fail to fsync the AOF file: Input/output error']);
      const untilBytes = { 'stderr.log': size('n2') };
      write('n2', REDIS_PANIC);

      const kinds = check
        .scan(
          ['n2'],
          [segv('n2')],
          () => undefined,
          () => undefined,
          () => [{ cause: 'fsync-error', fromBytes, untilBytes }],
        )
        .map((f) => f.kind);

      expect(kinds).toEqual(['crash-text', 'crash-text', 'unexpected-exit']);
    });

    it('a process that wrote crash text before the fault began is no report the fault started', () => {
      const check = new LogCheck(runDir, redisAdapter.crashPatterns);
      write('n2', ['21003:S 07 Dec 2026 07:05:01.000 # ASSERTION FAILED: an old bug']);
      const fromBytes = { 'stderr.log': size('n2') };
      write('n2', REDIS_PANIC);

      const kinds = check
        .scan(['n2'], [segv('n2')], () => ({ cause: 'fsync-error', fromBytes }))
        .map((f) => f.kind);

      expect(kinds).toEqual(['crash-text', 'crash-text', 'crash-text', 'unexpected-exit']);
    });

    it('without the log sizes at the fault it cannot tell, and the SIGSEGV stays a finding', () => {
      const check = new LogCheck(runDir, redisAdapter.crashPatterns);
      write('n2', REDIS_PANIC);

      const kinds = check.scan(['n2'], [segv('n2')], () => ({ cause: 'disk-full' })).map((f) => f.kind);

      expect(kinds).toEqual(['crash-text', 'crash-text', 'unexpected-exit']);
    });
  });
});
