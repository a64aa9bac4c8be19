/**
 * A complete Mallory system adapter for tiny-kv (server.mjs), the example of
 * docs/writing-a-system.md. Run it with:
 *
 *   mallory run --system examples/tiny-kv/system.ts --time 2m
 *   mallory run --system examples/tiny-kv/system.ts --bug ack-before-persist --faults kill --time 3m
 *
 * In your own project, import from 'mallory' instead of the relative path.
 */
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';

import {
  type LeaderCapability,
  matchLogRules,
  type Address,
  type ClientResult,
  type ClusterView,
  type DoctorFinding,
  type KvClient,
  type LaunchSpec,
  type LogRule,
  type ParsedLogEvent,
  type ReadConsistency,
  type SystemAdapter,
  type SystemDefinition,
  type SystemOptions,
} from '../../src/index.js';

const SERVER = fileURLToPath(new URL('./server.mjs', import.meta.url));
/** tiny-kv's primary never moves: the first node. */
const PRIMARY = 'n1';
const STATUS_TIMEOUT_MS = 500;
const READY_READ_TIMEOUT_MS = 1000;
/**
 * `ack-before-persist`: the primary acknowledges before it persists (a killed primary forgets
 * acknowledged writes). `follower-reads`: followers answer reads from their own copy, which may be
 * stale, and the adapter declares that (`readConsistency: 'sequential'`), so stale reads are not
 * findings while lost writes still are. `undeclared-follower-reads`: the same server without the
 * declaration, whose stale reads are then reported as the linearizability violations they are.
 * `rollback-on-restart`: a restarted primary undoes its last 20 acknowledged updates (found under
 * `follower-reads` too, by the final reads, which must see every acknowledged write).
 * `slow-restart`: a restarted primary answers 150 ms late for a minute (found by
 * `--recovery-contract`: it serves again, but not as well as before the fault).
 */
const BUGS = [
  'ack-before-persist',
  'rollback-on-restart',
  'follower-reads',
  'undeclared-follower-reads',
  'slow-restart',
] as const;

type HttpAnswer =
  | { readonly status: number; readonly body: Record<string, unknown> }
  | { readonly failed: 'refused' | 'timeout' | 'other'; readonly error: string };

/** One HTTP call with a deadline; never rejects. */
function call(
  address: Address,
  method: string,
  path: string,
  body: unknown,
  timeoutMs: number,
): Promise<HttpAnswer> {
  return new Promise((resolve) => {
    const req = request(
      { host: address.host, port: address.port, method, path, timeout: timeoutMs },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => {
          try {
            resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> });
          } catch {
            resolve({ failed: 'other', error: `bad answer: ${text.slice(0, 100)}` });
          }
        });
        res.on('error', (e) => {
          resolve({ failed: 'other', error: e.message });
        });
      },
    );
    req.on('timeout', () => {
      req.destroy(new Error(`no answer in ${timeoutMs} ms`));
    });
    req.on('error', (e: NodeJS.ErrnoException) => {
      resolve({ failed: e.code === 'ECONNREFUSED' ? 'refused' : 'timeout', error: e.message });
    });
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

function describe(answer: HttpAnswer): string {
  return 'failed' in answer ? answer.error : `HTTP ${answer.status}: ${String(answer.body.error)}`;
}

/**
 * The outcome of a call that changes state: `ok` only on success; `fail` only when it surely did
 * not take effect (refused at our node, or the follower could not reach the primary: 503, or a
 * cas mismatch: 409); `info` otherwise, since a request that timed out may still be applied.
 */
function updateOutcome(answer: HttpAnswer): ClientResult {
  if ('status' in answer && answer.status === 200) return { type: 'ok' };
  if ('status' in answer && (answer.status === 503 || answer.status === 409)) {
    return { type: 'fail', error: describe(answer) };
  }
  if ('failed' in answer && answer.failed === 'refused') return { type: 'fail', error: describe(answer) };
  return { type: 'info', error: describe(answer) };
}

class TinyKvClient implements KvClient {
  constructor(
    private readonly address: Address,
    private readonly timeoutMs: number,
  ) {}

  async read(key: string): Promise<ClientResult> {
    const answer = await call(
      this.address,
      'GET',
      `/kv/${encodeURIComponent(key)}`,
      undefined,
      this.timeoutMs,
    );
    if ('status' in answer && answer.status === 200) {
      const value = answer.body.value;
      return { type: 'ok', value: typeof value === 'number' ? value : null };
    }
    // A read changes nothing: whatever happened to it, it can be `fail`.
    return { type: 'fail', error: describe(answer) };
  }

  async write(key: string, value: number): Promise<ClientResult> {
    return updateOutcome(
      await call(this.address, 'PUT', `/kv/${encodeURIComponent(key)}`, { value }, this.timeoutMs),
    );
  }

  async cas(key: string, expected: number, value: number): Promise<ClientResult> {
    const path = `/kv/${encodeURIComponent(key)}`;
    return updateOutcome(await call(this.address, 'POST', path, { expected, value }, this.timeoutMs));
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** What tiny-kv prints that a campaign should know by name (everything else is template-mined). */
const LOG_RULES: readonly LogRule[] = [
  { re: / INFO started as (primary|follower) with (\d+) keys/, type: 'started', groups: ['role', 'keys'] },
  { re: / WARN forward to primary failed: (\S+)/, type: 'forward-failed', groups: ['reason'] },
];

class TinyKvAdapter implements SystemAdapter {
  readonly name = 'tiny-kv';
  readonly services = ['kv'];
  /** Followers talk to the primary on the same port clients use. */
  readonly peerServices = ['kv'];
  readonly leadership: LeaderCapability = { leader: (cluster) => this.currentLeader(cluster) };
  readonly crashPatterns = [/tiny-kv: state file unreadable/];
  readonly readConsistency: ReadConsistency;

  constructor(private readonly bugs: readonly string[]) {
    this.readConsistency = bugs.includes('follower-reads') ? 'sequential' : 'linearizable';
  }

  doctor(): Promise<readonly DoctorFinding[]> {
    return Promise.resolve([
      existsSync(SERVER)
        ? { ok: true, what: `tiny-kv server ${SERVER}` }
        : { ok: false, what: `tiny-kv server missing: ${SERVER}`, fix: 'git checkout examples/tiny-kv' },
    ]);
  }

  launch(node: string, cluster: ClusterView): LaunchSpec {
    const listen = cluster.listen(node, 'kv');
    // Through `dial`, so the network backend can cut and delay this link.
    const primary = cluster.dial(node, PRIMARY, 'kv');
    return {
      command: process.execPath,
      args: [
        SERVER,
        '--id',
        node,
        '--listen',
        `${listen.host}:${listen.port}`,
        '--primary',
        PRIMARY,
        '--primary-addr',
        `${primary.host}:${primary.port}`,
        ...this.bugs.flatMap((bug) => ['--bug', bug]),
      ],
    };
  }

  /** Serving = every member answers a read (followers through the primary). */
  async ready(cluster: ClusterView): Promise<boolean> {
    const answers = await Promise.all(
      cluster.members.map((node) =>
        this.client(node, cluster, READY_READ_TIMEOUT_MS).read('__mallory_ready__'),
      ),
    );
    return answers.every((a) => a.type === 'ok');
  }

  client(node: string, cluster: ClusterView, timeoutMs: number): KvClient {
    return new TinyKvClient(cluster.clientAddress(node, 'kv'), timeoutMs);
  }

  private async currentLeader(cluster: ClusterView): Promise<string | undefined> {
    const answer = await call(
      cluster.clientAddress(PRIMARY, 'kv'),
      'GET',
      '/status',
      undefined,
      STATUS_TIMEOUT_MS,
    );
    return 'status' in answer && answer.status === 200 ? PRIMARY : undefined;
  }

  parseLog(line: string): ParsedLogEvent | undefined {
    return matchLogRules(LOG_RULES, line);
  }
}

export const system: SystemDefinition = {
  name: 'tiny-kv',
  defaultNodes: 3,
  bugs: BUGS,
  create(options: SystemOptions): SystemAdapter {
    return new TinyKvAdapter(options.bugs);
  },
};

export default system;
