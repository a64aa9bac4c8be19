/**
 * Treats a standard output closed by its reader (`mallory check F | head -1`) as no reason to stop
 * or to change the verdict: the reader has all it wants, so Mallory drops what it would still print
 * and ends as it would have, with the exit status its command set (a history that is not
 * linearizable still exits 1), instead of dying on an unhandled EPIPE with a stack trace. Exiting 0
 * there would turn a failing verdict into success for `set -o pipefail` and for the shell's
 * `PIPESTATUS`.
 */
export function endQuietlyWhenStdoutCloses(): void {
  const stdout = process.stdout;
  stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    stdout.write = dropWrite;
  });
}

/** `write` once nobody reads: the text is dropped, and a callback still hears that it is done. */
function dropWrite(_chunk: unknown, encodingOrCallback?: unknown, callback?: unknown): boolean {
  const done = typeof encodingOrCallback === 'function' ? encodingOrCallback : callback;
  if (typeof done === 'function') process.nextTick(done);
  return true;
}
