import type { RunSummary } from '../../campaign/reporter.js';
import { EXIT_ERROR, EXIT_FOUND_BUG, EXIT_INTERRUPTED } from '../campaign-guard.js';

/**
 * `mallory run`'s exit status from its summary: an error 2; any bug 1 — also when the run was
 * then interrupted (Ctrl-C, SIGTERM, SIGHUP), since the bug is recorded and is the answer; else
 * interrupted 130; else 0.
 */
export function campaignExitCode(summary: Pick<RunSummary, 'status' | 'bugs'>): number {
  if (summary.status === 'error') return EXIT_ERROR;
  if (summary.bugs.length > 0) return EXIT_FOUND_BUG;
  return summary.status === 'interrupted' ? EXIT_INTERRUPTED : 0;
}
