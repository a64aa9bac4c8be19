import { shellQuote } from '../../../core/shell.js';

/**
 * The shell side of following files on a host over one command channel: up to two files per
 * channel, the first's bytes on the channel's stdout, the second's on its stderr (two byte streams
 * that need no framing), each by a GNU `tail -c +1 -F` from the file's start.
 *
 * - The channel's shell leads its own process group; it says `pid P START` on stdout first, so
 *   the group can be recorded and ended by pid and start time.
 * - A file not there yet is waited for by the shell (`[ -e ]`, 10 ms then every 100 ms) before its
 *   tail starts: GNU tail started on a missing file polls once a second for good, while on an
 *   existing one it follows by inotify, so an append arrives as soon as it is written.
 * - Each tail runs with `--pid` of a `sleep` of its own; ending that sleep makes tail read what
 *   is left and exit (checked every 100 ms, `-s 0.1`), so stopping loses nothing written before.
 * - A line `N` on the channel's stdin stops file N; once its tail has exited the shell writes
 *   `marker` on that file's stream, the last bytes it ever carries. End of stdin (the channel
 *   closed, the connection gone) stops them all and the shell exits after its tails.
 * - tail's own messages (truncation, replacement) are dropped: on truncation it goes on from the
 *   file's new start, on replacement (rotation) it follows the new file from its start.
 */
export function tailFollowScript(paths: readonly string[], marker: string): string {
  if (paths.length < 1 || paths.length > 2) throw new Error('a tail channel follows one or two files');
  const m = shellQuote(marker);
  const lines = [
    `start=$(cut -d' ' -f22 /proc/$$/stat); echo "pid $$ $start"`,
    `follow() { s=0.01; while [ ! -e "$1" ]; do kill -0 "$2" 2>/dev/null || return 0; sleep $s; s=0.1; done; ` +
      `exec tail -c +1 -F -s 0.1 --pid="$2" -- "$1" 2>/dev/null; }`,
    `sleep 2147483647 >/dev/null 2>&1 & w1=$!`,
    `follow ${shellQuote(paths[0])} $w1 & f1=$!`,
  ];
  const cases = [`1) kill $w1 2>/dev/null; wait $f1; printf '%s' ${m} ;;`];
  if (paths.length === 2) {
    lines.push(`sleep 2147483647 >/dev/null 2>&1 & w2=$!`, `follow ${shellQuote(paths[1])} $w2 >&2 & f2=$!`);
    cases.push(`2) kill $w2 2>/dev/null; wait $f2; printf '%s' ${m} >&2 ;;`);
  }
  lines.push(
    `while read n; do case $n in ${cases.join(' ')} esac; done`,
    `kill $w1 ${paths.length === 2 ? '$w2 ' : ''}2>/dev/null; wait`,
  );
  return lines.join('\n');
}

/**
 * One followed file's bytes as they come over its stream: delivered at once until it is asked to
 * stop, then held until the marker closes them (so the marker is never delivered).
 */
export class FollowedBytes {
  private held: Buffer[] = [];
  private heldBytes = 0;
  private stopping = false;
  private done = false;
  private readonly markerBytes: Buffer;
  /** Resolves once every byte of the file is delivered (the marker came, or the stream ended). */
  readonly finished: Promise<void>;
  private finish!: () => void;

  constructor(
    marker: string,
    private readonly onData: (chunk: Buffer) => void,
  ) {
    this.markerBytes = Buffer.from(marker);
    this.finished = new Promise((resolve) => (this.finish = resolve));
  }

  get isDone(): boolean {
    return this.done;
  }

  push(chunk: Buffer): void {
    if (this.done || chunk.length === 0) return;
    if (!this.stopping) {
      this.onData(chunk);
      return;
    }
    this.held.push(chunk);
    this.heldBytes += chunk.length;
    const all = Buffer.concat(this.held, this.heldBytes);
    this.held = [all];
    if (
      all.length >= this.markerBytes.length &&
      all.subarray(all.length - this.markerBytes.length).equals(this.markerBytes)
    ) {
      this.held = [all.subarray(0, all.length - this.markerBytes.length)];
      this.end();
    }
  }

  /** From now on bytes wait for the marker. */
  stop(): void {
    this.stopping = true;
  }

  /** No more bytes: delivers what is held. */
  end(): void {
    if (this.done) return;
    this.done = true;
    const rest = Buffer.concat(this.held);
    this.held = [];
    if (rest.length > 0) this.onData(rest);
    this.finish();
  }
}
