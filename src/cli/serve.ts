import { DEFAULT_SERVE_HOST, DEFAULT_SERVE_PORT, serveStore } from '../report/store-server.js';
import { UsageError } from '../core/errors.js';
import type { RegisterCommand } from './command.js';

interface ServeFlags {
  store: string;
  host: string;
  port: string;
}

function portOf(text: string): number {
  if (!/^\d+$/.test(text))
    throw new UsageError('bad-args', `serve: --port takes a port number (e.g. 8080), got "${text}"`);
  return Number(text);
}

export const registerServe: RegisterCommand = (program) => {
  program
    .command('serve')
    .description("serve the store's runs and reports read-only over HTTP (loopback by default), until Ctrl-C")
    .option('--store <dir>', 'the store to serve', 'store')
    .option(
      '--host <address>',
      'the address to listen on (another than loopback lets other machines read the store)',
      DEFAULT_SERVE_HOST,
    )
    .option('--port <n>', 'the port to listen on (0: any free one)', String(DEFAULT_SERVE_PORT))
    .action(async (flags: ServeFlags) => {
      const server = await serveStore(flags.store, { host: flags.host, port: portOf(flags.port) });
      // Listening for the signals before saying where it serves: whoever read the address may stop it at once.
      const stopped = new Promise<void>((done) => {
        const stop = (): void => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          void server.close().then(done);
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
      process.stderr.write(`mallory: serving ${flags.store} read-only at ${server.url} (Ctrl-C stops)\n`);
      process.stdout.write(`${server.url}\n`);
      await stopped;
    });
};
