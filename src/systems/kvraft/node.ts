import { createProbe } from '../../probe/index.js';
import { parseNodeArgs, USAGE, type NodeArgs } from './_internals/args.js';
import { nodeIo } from './_internals/node-seams.js';
import { startNode } from './_internals/start.js';

/**
 * One kvraft node process: `node dist/systems/kvraft/node.js --id n1 --data DIR --client H:P
 * --peer H:P --peers n1=H:P,n2=H:P,... --members n1,n2,n3 [--join] [--bug NAME]...`
 */
function main(): void {
  let args: NodeArgs;
  try {
    args = parseNodeArgs(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`kvraft: ${(error as Error).message}\n${USAGE}\n`);
    process.exit(2);
  }
  const probe = createProbe();
  const node = startNode(args, nodeIo, probe);
  const fatal = (what: string) => (error: Error) => {
    process.stderr.write(`kvraft ${args.id}: cannot listen for ${what}: ${error.message}\n`);
    process.exit(2);
  };
  node.server.on('error', fatal('clients'));
  node.transport.listening().catch(fatal('peers'));
  process.stdout.write(
    `kvraft ${args.id} started: client ${args.client.host}:${args.client.port} ` +
      `peer ${args.peer.host}:${args.peer.port} bugs [${[...args.bugs].join(',')}]\n`,
  );
  const stop = (signal: NodeJS.Signals): void => {
    // Nothing in the harness sends these (it kills with SIGKILL): say so, for whoever reads the log.
    process.stderr.write(`kvraft ${args.id}: received ${signal}, stopping\n`);
    node.close();
    probe.close();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main();
