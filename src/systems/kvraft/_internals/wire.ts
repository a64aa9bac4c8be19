import type { NetSocket } from '../seams.js';

/** Largest line accepted from a socket; a longer one means a broken peer, so the socket is closed. */
const MAX_LINE_BYTES = 64 * 1024 * 1024;

/** Calls `onLine` for every newline-terminated line that arrives on `socket`. */
export function readLines(socket: NetSocket, onLine: (line: string) => void): void {
  let pending = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    pending += chunk;
    let newline = pending.indexOf('\n');
    while (newline >= 0) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      if (line.length > 0) onLine(line);
      newline = pending.indexOf('\n');
    }
    if (pending.length > MAX_LINE_BYTES) socket.destroy();
  });
}

/** Parses one JSON line into an object, or undefined when it is not one. */
export function parseObject(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
