import { cleanupRegistries } from '../cluster/resources.js';
import { markIncomplete } from '../store/run-store.js';
import type { RegisterCommand } from './command.js';

export const registerCleanup: RegisterCommand = (program, setExit) => {
  program
    .command('cleanup')
    .description('remove what crashed runs left behind: processes, temp dirs, namespaces, rules')
    .option('--force', 'also clean runs whose fuzzer process still seems alive')
    .action((flags: { force?: boolean }) => {
      const report = cleanupRegistries({ force: flags.force ?? false });
      for (const dir of report.runDirs) {
        try {
          if (markIncomplete(dir)) process.stdout.write(`marked incomplete: ${dir}\n`);
        } catch {
          // the run dir is gone or unreadable: nothing to mark
        }
      }
      process.stdout.write(
        report.runs === 0
          ? 'mallory cleanup: nothing left behind\n'
          : `mallory cleanup: removed ${report.removed} resources of ${report.runs} runs\n`,
      );
      setExit(0);
    });
};
