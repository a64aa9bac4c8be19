import { defineConfig } from 'vitest/config';

// Unit tests run in parallel. Tests against real servers (test/e2e, test/systems) start real
// processes; most of their time is spent waiting on the systems (schedules, elections, timeouts),
// so E2E_FILES_AT_ONCE files run side by side, each in its own process. Every run names what it
// makes by its own id (namespaces, subnets, data and temp dirs) and every test has its own store
// and registry dir, and the leak tests compare only what their own runs made, so files running
// together do not see each other. MALLORY_E2E_FILES_AT_ONCE=1 runs them one at a time. `npm test`
// runs the two projects one after the other. The tests of the system loader,
// the log rules and the settings start no process: they are unit tests. The network namespace tests change the
// host (namespaces, links, iptables), and the disk layer's test mounts: they run with the real servers.
const PURE_SYSTEM_TESTS = [
  'test/systems/load-system.test.ts',
  'test/systems/log-rules.test.ts',
  'test/systems/settings.test.ts',
];
const HOST_TESTS = ['test/cluster/net/netns.test.ts', 'test/cluster/disk-layer.test.ts'];
/** Measured on 2 cores (see README, Tests): 3 files at once. */
const E2E_FILES_AT_ONCE = Number(process.env.MALLORY_E2E_FILES_AT_ONCE ?? 3);
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          // The example systems' own tests start no process (their e2e tests live in test/e2e).
          include: ['test/**/*.test.ts', 'examples/*/test/**/*.test.ts'],
          exclude: [
            'test/e2e/**',
            'test/systems/*/**',
            'test/systems/!(load-system|log-rules|settings).test.ts',
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
          poolOptions: { forks: { minForks: 1, maxForks: E2E_FILES_AT_ONCE } },
        },
      },
    ],
  },
});
