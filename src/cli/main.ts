import { Command, CommanderError } from 'commander';

import { UsageError } from '../core/errors.js';
import { StoreFullError } from '../store/store-full.js';
import { endQuietlyWhenStdoutCloses } from './_internals/closed-stdout.js';
import { packageVersion } from './_internals/package-version.js';
import { COMMANDS } from './commands.js';

export const EXIT_OK = 0;
export const EXIT_BUG = 1;
export const EXIT_USAGE = 2;

/** Jepsen's flags a user may bring, and Mallory's for each. */
const JEPSEN_FLAGS: Readonly<Record<string, string>> = {
  '--nodes-file': "--nodes-file is Jepsen's flag: give the file to --hosts FILE (one host a line)",
};

/** Commander's `unknown option` for a Jepsen flag becomes the line that names Mallory's. */
function jepsenHint(text: string): string {
  const flag = /unknown option '([^']+)'/.exec(text)?.[1];
  const hint = flag === undefined ? undefined : JEPSEN_FLAGS[flag];
  return hint === undefined ? text : `mallory: ${hint}\n`;
}

async function main(argv: readonly string[]): Promise<number> {
  const program = new Command('mallory')
    .description('Greybox fuzzer for distributed systems')
    .version(packageVersion(), '-V, --version', 'print the version and exit')
    .exitOverride()
    .showHelpAfterError(false)
    .configureOutput({ writeErr: (s) => process.stderr.write(jepsenHint(s)) });
  let status = EXIT_OK;
  for (const register of COMMANDS) {
    register(program, (code) => {
      status = code;
    });
  }
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
    }
    if (error instanceof UsageError || error instanceof StoreFullError) {
      process.stderr.write(`mallory: ${error.message}\n`);
      return EXIT_USAGE;
    }
    throw error;
  }
  return status;
}

/**
 * An error nothing caught, thrown where no campaign guards the process (before a run, after it,
 * in any other command): an internal error, exit 2 — never Node's own exit 1, which says "found a
 * bug". While a campaign runs, its guard (campaign-guard.ts) has its own listener and decides.
 */
function lastResort(event: 'uncaughtException' | 'unhandledRejection'): (error: unknown) => void {
  return (error) => {
    if (process.listenerCount(event) > 1) return;
    try {
      process.stderr.write(
        `mallory: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
    } catch {
      // no terminal any more
    }
    process.exit(EXIT_USAGE);
  };
}

process.on('uncaughtException', lastResort('uncaughtException'));
process.on('unhandledRejection', lastResort('unhandledRejection'));
endQuietlyWhenStdoutCloses();
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `mallory: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = EXIT_USAGE;
  },
);
