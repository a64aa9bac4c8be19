import type { RegisterCommand } from './command.js';

/** Every `mallory` subcommand, in the order `--help` lists them. */
export const COMMANDS: readonly RegisterCommand[] = [];
