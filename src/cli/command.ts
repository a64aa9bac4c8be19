import type { Command } from 'commander';

/** Each CLI command file exports one of these; it adds its subcommand and reports the exit status. */
export type RegisterCommand = (program: Command, setExit: (code: number) => void) => void;
