import { registerCheck } from './check.js';
import { registerCleanup } from './cleanup.js';
import type { RegisterCommand } from './command.js';
import { registerCompare } from './compare.js';
import { registerDoctor } from './doctor.js';
import { registerExport } from './export.js';
import { registerFleet } from './fleet.js';
import { registerLogs } from './logs.js';
import { registerPlan } from './plan.js';
import { registerReplay } from './replay.js';
import { registerReport } from './report.js';
import { registerRun } from './run.js';
import { registerServe } from './serve.js';
import { registerShrink } from './shrink.js';

/** Every `mallory` subcommand, in the order `--help` lists them. */
export const COMMANDS: readonly RegisterCommand[] = [
  registerRun,
  registerReplay,
  registerShrink,
  registerCheck,
  registerReport,
  registerServe,
  registerExport,
  registerCompare,
  registerPlan,
  registerFleet,
  registerLogs,
  registerDoctor,
  registerCleanup,
];
