/** A history that cannot be read or checked as given: bad syntax, or ops that do not pair up. */
export class HistoryError extends Error {
  readonly code = 'BAD_HISTORY';
  /** The op's position in the history (0-based), when the problem is one op. */
  readonly position: number | undefined;

  constructor(message: string, position?: number) {
    super(message);
    this.name = 'HistoryError';
    this.position = position;
  }
}
