import { createConnection } from 'node:net';

/** Sends one command line to a disk layer's control socket here; resolves with its one-line answer. */
export function askSocket(socket: string, line: string, timeoutMs: number): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const conn = createConnection(socket);
    let buffer = '';
    const timer = setTimeout(() => {
      conn.destroy();
      reject(new Error(`no answer to "${line}" within ${timeoutMs} ms`));
    }, timeoutMs);
    conn.setEncoding('utf8');
    conn.on('connect', () => conn.write(`${line}\n`));
    conn.on('data', (chunk: string) => {
      buffer += chunk;
      const end = buffer.indexOf('\n');
      if (end < 0) return;
      clearTimeout(timer);
      conn.end();
      resolvePromise(buffer.slice(0, end));
    });
    conn.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    conn.on('close', () => {
      clearTimeout(timer);
      reject(new Error(`the layer closed the connection without answering "${line}"`));
    });
  });
}
