import { defineConfig } from 'vitest/config';

// Unit tests run in parallel; tests against real servers (test/e2e, test/systems) start real
// processes and share 2 cores, so they run one file at a time. `npm test` runs the two projects one
// after the other: some e2e tests compare the whole host before and after (processes, namespaces,
// temp dirs), and unit tests running beside them would change it. The tests of the system loader,
// the log rules and the settings start no process: they are unit tests. The network namespace tests change the
// host (namespaces, links, iptables), and the disk layer's test mounts: they run with the real servers.
const PURE_SYSTEM_TESTS = [
  'test/systems/load-system.test.ts',
  'test/systems/log-rules.test.ts',
  'test/systems/settings.test.ts',
];
const HOST_TESTS = ['test/cluster/net/netns.test.ts', 'test/cluster/disk-layer.test.ts'];
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
          poolOptions: { forks: { singleFork: true } },
        },
      },
    ],
  },
});
