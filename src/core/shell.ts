/** Quotes one word for a POSIX shell. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** An argv as one shell command line. */
export function shellLine(argv: readonly string[]): string {
  return argv.map(shellQuote).join(' ');
}
