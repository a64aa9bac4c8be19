import type { RegisterCommand } from './command.js';
import { registerCheck } from './check.js';

/** Every `mallory` subcommand, in the order `--help` lists them. */
export const COMMANDS: readonly RegisterCommand[] = [registerCheck];
