import type { Resource } from '../resources.js';
import { SshRuntime } from './ssh.js';

/**
 * `node remote-undo.js RESOURCE_JSON`: undoes one remote resource on its host (what `mallory
 * cleanup` and a run's registry call, synchronously, for what lives on other hosts). Exit 0 when
 * the undo ran, 1 when the host could not be reached.
 */
async function main(): Promise<void> {
  const resource = JSON.parse(process.argv[2] ?? '{}') as Extract<Resource, { kind: 'remote' }>;
  // The host was accepted when the run began: its key is in known_hosts by now.
  const target = {
    ...resource.target,
    strictHostKeyChecking:
      resource.target.strictHostKeyChecking === 'no' ? ('no' as const) : ('yes' as const),
  };
  const host = await SshRuntime.connect(target, 1);
  try {
    await host.shell(resource.undo);
  } finally {
    await host.close();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
