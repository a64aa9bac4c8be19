import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { lastAnswer, lastLogLine } from '../../src/campaign/_internals/start-cluster.js';

describe('lastAnswer (why a system did not serve at start-up)', () => {
  const running = (): string => 'running';

  it('names the unmet checks of the last try and the nodes that are not running', () => {
    const said = lastAnswer(
      [
        { atMs: 0, ms: 5, ready: false, error: 'an early try' },
        {
          atMs: 500,
          ms: 7,
          ready: false,
          checks: [
            { node: 'n1', check: 'read', ok: true, detail: 'served' },
            { node: 'n2', check: 'read', ok: false, detail: 'timeout: no answer within 1000 ms' },
            { node: 'n3', check: 'read', ok: false, detail: 'refused: connect ECONNREFUSED' },
          ],
        },
      ],
      ['n1', 'n2', 'n3'],
      (node) => (node === 'n3' ? 'exited' : 'running'),
    );
    expect(said).toBe(
      ' (last try: n2 read: timeout: no answer within 1000 ms; n3 read: refused: connect ECONNREFUSED; not running: n3 exited)',
    );
  });

  it('names what the last try threw, at most three checks, and nothing when there is nothing to say', () => {
    expect(lastAnswer([{ atMs: 0, ms: 1, ready: false, error: 'boom' }], ['n1'], running)).toBe(
      ' (last try: boom)',
    );
    const checks = ['n1', 'n2', 'n3', 'n4', 'n5'].map((node) => ({ node, check: 'read', ok: false }));
    expect(lastAnswer([{ atMs: 0, ms: 1, ready: false, checks }], [], running)).toBe(
      ' (last try: n1 read: no; n2 read: no; n3 read: no, and 2 more)',
    );
    expect(lastAnswer([], ['n1'], running)).toBe('');
  });

  it("quotes an exited node's last log line, which says why it exited", () => {
    const dir = mkdtempSync(join(tmpdir(), 'mallory-start-'));
    try {
      mkdirSync(join(dir, 'n2'));
      writeFileSync(
        join(dir, 'n2', 'stderr.log'),
        'starting\nlisten tcp 10.1.2.2:2380: bind: cannot assign requested address\n\n',
      );
      mkdirSync(join(dir, 'n3'));
      writeFileSync(join(dir, 'n3', 'stdout.log'), 'only stdout\n');
      expect(lastLogLine(join(dir, 'n2'))).toBe(
        'listen tcp 10.1.2.2:2380: bind: cannot assign requested address',
      );
      expect(lastLogLine(join(dir, 'n3'))).toBe('only stdout');
      // Node ends a crash with a stack and its version: the error line says why.
      mkdirSync(join(dir, 'n5'));
      writeFileSync(
        join(dir, 'n5', 'stderr.log'),
        [
          'node:internal/modules/cjs/loader:1210',
          '  throw err;',
          '  ^',
          '',
          "Error: Cannot find module '/srv/dist/node.js'",
          '    at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15)',
          '    at node:internal/main/run_main_module:28:49 {',
          "  code: 'MODULE_NOT_FOUND',",
          '  requireStack: []',
          '}',
          '',
          'Node.js v20.20.2',
          '',
        ].join('\n'),
      );
      expect(lastLogLine(join(dir, 'n5'))).toBe("Error: Cannot find module '/srv/dist/node.js'");
      expect(lastLogLine(join(dir, 'n4'))).toBeUndefined();
      const said = lastAnswer(
        [],
        ['n1', 'n2'],
        (n) => (n === 'n2' ? 'exited' : 'running'),
        (n) => lastLogLine(join(dir, n)),
      );
      expect(said).toBe(
        ' (not running: n2 exited ("listen tcp 10.1.2.2:2380: bind: cannot assign requested address"))',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
