import { defineConfig } from 'vitest/config';

import { LongestFirstSequencer } from './test/_helpers/sequencer.js';

// Unit tests run in parallel. Tests against real servers (test/e2e, test/systems) start real
// processes; most of their time is spent waiting on the systems (schedules, elections, timeouts),
// so `npm test` runs three files side by side (`--maxWorkers=3`; vitest's default on 2 cores is
// one), each in its own process. Every run names what it makes by its own id (namespaces, subnets,
// data and temp dirs), every test has its own store and registry dir, and the leak tests compare
// only what their own runs made, so files running together do not see each other. `npm test` runs
// the two projects one after the other (the pool's size is a setting of the whole run, not of a
// project). The tests of the system loader, the log rules and the settings start no process: they
// are unit tests. The network namespace tests change the host (namespaces, links, iptables), and
// the disk layer's test mounts: they run with the real servers.
const PURE_SYSTEM_TESTS = [
  'test/systems/load-system.test.ts',
  'test/systems/log-rules.test.ts',
  'test/systems/settings.test.ts',
  'test/systems/check-binary.test.ts',
];
const HOST_TESTS = [
  'test/cluster/net/netns.test.ts',
  'test/cluster/disk-layer.test.ts',
  'test/cluster/runtime/ssh.test.ts',
  'test/cluster/runtime/ssh-stream.test.ts',
  'test/cluster/runtime/docker.test.ts',
];
export default defineConfig({
  test: {
    sequence: { sequencer: LongestFirstSequencer },
    projects: [
      {
        test: {
          name: 'unit',
          // The example systems' own tests start no process (their e2e tests live in test/e2e).
          include: ['test/**/*.test.ts', 'examples/*/test/**/*.test.ts'],
          exclude: [
            'test/e2e/**',
            'test/systems/*/**',
            'test/systems/!(load-system|log-rules|settings|check-binary).test.ts',
            ...HOST_TESTS,
            'node_modules/**',
          ],
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts', 'test/systems/**/*.test.ts', ...HOST_TESTS],
          exclude: [...PURE_SYSTEM_TESTS, 'node_modules/**'],
          testTimeout: 300_000,
          hookTimeout: 120_000,
          pool: 'forks',
        },
      },
    ],
  },
});
