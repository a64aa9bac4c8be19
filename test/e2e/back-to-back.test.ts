import { spawn } from 'node:child_process';

import { afterAll, describe, expect, it } from 'vitest';

import {
  BIN,
  mallory,
  REPO,
  registryFiles,
  sandbox,
  type Sandbox,
  waitFor,
  disposeSandbox,
  explainCampaign,
  skipReason,
} from './helpers.js';
import { settledLeftovers, snapshot } from './host.js';

/** The systems this machine can run, each with the binary that says it is installed. */
const SYSTEMS = [
  { name: 'kvraft', ok: true },
  { name: 'etcd', ok: skipReason(['etcd']) === undefined },
  { name: 'redis', ok: skipReason(['redis-server', 'redis-sentinel']) === undefined },
  { name: 'dqlite', ok: skipReason(['dqlite-demo']) === undefined },
].filter((s) => s.ok);

/** How each campaign ends: in turn, on its own, by Ctrl-C, by SIGKILL (then cleanup), by SIGTERM. */
const ENDINGS = ['complete', 'SIGINT', 'SIGKILL', 'SIGTERM'] as const;
const CAMPAIGNS = 20;
/** How long a campaign that is to be stopped runs after it has printed its run dir. */
const RUN_BEFORE_STOP_MS = 2000;

function campaign(
  box: Sandbox,
  system: string,
  ending: (typeof ENDINGS)[number],
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [BIN, 'run', '--system', system, '--time', '4s', '--steps', '2', '--step', '1s', '--store', box.store],
      { env: box.env, cwd: REPO, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => {
      resolve({ code, stderr });
    });
    if (ending === 'complete') return;
    waitFor(() => stderr.includes('run dir'), 120_000)
      .then(() => new Promise((r) => setTimeout(r, RUN_BEFORE_STOP_MS)))
      .then(
        () => child.kill(ending),
        () => child.kill('SIGKILL'),
      );
  });
}

describe('back-to-back campaigns', () => {
  const boxes: Sandbox[] = [];
  afterAll(() => {
    for (const b of boxes) disposeSandbox(b);
  });

  it(`${CAMPAIGNS} short campaigns over ${SYSTEMS.map((s) => s.name).join(', ')}, some stopped or killed, leave the host unchanged`, async () => {
    const box = sandbox();
    boxes.push(box);
    const before = snapshot();
    for (let i = 0; i < CAMPAIGNS; i++) {
      const system = SYSTEMS[i % SYSTEMS.length].name;
      const ending = ENDINGS[Math.floor(i / SYSTEMS.length + i) % ENDINGS.length];
      const { code, stderr } = await campaign(box, system, ending);
      if (ending === 'SIGKILL') expect((await mallory(['cleanup'], box)).code).toBe(0);
      // A campaign that ran to its end exits 0 (nothing found) or 1 (a finding); a stopped one 130.
      const expected = ending === 'complete' ? [0, 1] : ending === 'SIGKILL' ? [null] : [130];
      expect(
        expected,
        `campaign ${i} (${system}, ${ending}) exited ${code}\n${explainCampaign(code, stderr)}`,
      ).toContain(code);
      expect({ i, system, ending, left: await settledLeftovers(before, box) }).toEqual({
        i,
        system,
        ending,
        left: [],
      });
      expect(registryFiles(box)).toEqual([]);
    }
  }, 1_800_000);
});
