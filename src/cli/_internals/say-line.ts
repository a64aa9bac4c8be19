/** One line on stderr; a closed terminal (SIGHUP, a closed pipe) must not crash what runs. */
export function sayLine(line: string): void {
  try {
    process.stderr.write(`${line}\n`);
  } catch {
    // no terminal any more
  }
}
