/**
 * Treats a standard output closed by its reader (`mallory check F | head -1`) as the normal end of
 * the command: the reader has all it wants, so Mallory exits 0 quietly, as `cat` and `grep` do,
 * instead of dying on an unhandled EPIPE with a stack trace.
 */
export function endQuietlyWhenStdoutCloses(): void {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
}
