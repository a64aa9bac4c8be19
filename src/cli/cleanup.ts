import { cleanupRegistries } from '../cluster/resources.js';
import { markIncomplete } from '../store/run-store.js';
import { isDiskFull } from '../store/store-full.js';
import type { RegisterCommand } from './command.js';

export const registerCleanup: RegisterCommand = (program, setExit) => {
  program
    .command('cleanup')
    .description('remove what crashed runs left behind: processes, temp dirs, namespaces, rules')
    .option('--dry-run', 'only list what would be removed')
    .option('--force', 'also clean runs whose fuzzer process is still alive (it may be a live run!)')
    .action((flags: { force?: boolean; dryRun?: boolean }) => {
      const dryRun = flags.dryRun ?? false;
      const out = (text: string): boolean => process.stdout.write(text + '\n');
      // Each run and each resource said as it is reached: one on an SSH host may take seconds.
      const report = cleanupRegistries({
        force: flags.force ?? false,
        dryRun,
        onRun: (run) => {
          out(
            `run ${run.runDir ?? '(no run dir)'} (fuzzer pid ${run.ownerPid ?? '?'} gone): ` +
              `${run.resources.length} resources${dryRun ? ' would be removed' : ' to remove'}`,
          );
          if (dryRun) for (const resource of run.resources) out(`  ${resource}`);
        },
        onRemoved: (resource) => out(`  removed ${resource}`),
      });
      for (const run of report.runs) {
        if (dryRun || run.runDir === undefined) continue;
        try {
          if (markIncomplete(run.runDir)) out(`  marked incomplete: ${run.runDir}`);
        } catch (error) {
          // A run dir gone or unreadable has nothing to mark; a full disk is said.
          if (isDiskFull(error))
            out(
              `  could not mark ${run.runDir} incomplete: the disk under it is full (mallory report still says it was cut short)`,
            );
        }
      }
      for (const file of report.unknown) {
        out(
          `registry ${file} has no owner line, so its run may still be live: left alone (when no run is going, mallory cleanup --force removes what it lists)`,
        );
      }
      out(
        report.runs.length === 0 && report.unknown.length > 0
          ? `mallory cleanup: removed nothing; ${report.unknown.length} registries left alone`
          : report.runs.length === 0
            ? 'mallory cleanup: nothing left behind'
            : dryRun
              ? `mallory cleanup --dry-run: would remove ${report.runs.reduce((n, r) => n + r.resources.length, 0)} resources of ${report.runs.length} runs`
              : `mallory cleanup: removed ${report.removed} resources of ${report.runs.length} runs`,
      );
      setExit(0);
    });
};
