import { closeSync, openSync, writeSync } from 'node:fs';

import type { EventAttrs } from '../core/event.js';

/**
 * The probe SDK: a JS/TS system imports it and emits named internal events. Events are appended as
 * JSON lines (`{ts, type, attrs}`, `ts` on the host's monotonic clock in ns) to the file named by
 * `MALLORY_PROBE_FILE`; the fuzzer tails that file. Without the variable, probes cost nothing.
 * Sends and receives carry a message id (`attrs.msg`) so the fuzzer sees exact happens-before edges.
 */
export interface Probe {
  emit(type: string, attrs?: EventAttrs): void;
  flush(): void;
  close(): void;
}

const FLUSH_INTERVAL_MS = 20;

class FileProbe implements Probe {
  private readonly fd: number;
  private buffer: string[] = [];
  private readonly timer: NodeJS.Timeout;

  constructor(path: string) {
    this.fd = openSync(path, 'a');
    this.timer = setInterval(() => {
      this.flush();
    }, FLUSH_INTERVAL_MS);
    this.timer.unref();
    process.on('exit', () => {
      this.flush();
    });
  }

  emit(type: string, attrs?: EventAttrs): void {
    const ts = Number(process.hrtime.bigint());
    this.buffer.push(JSON.stringify(attrs ? { ts, type, attrs } : { ts, type }) + '\n');
  }

  flush(): void {
    if (this.buffer.length === 0) return;
    const text = this.buffer.join('');
    this.buffer = [];
    writeSync(this.fd, text);
  }

  close(): void {
    clearInterval(this.timer);
    this.flush();
    closeSync(this.fd);
  }
}

const NOOP: Probe = {
  emit() {
    // probes off
  },
  flush() {
    // probes off
  },
  close() {
    // probes off
  },
};

/** The probe for this process, from `MALLORY_PROBE_FILE`, or a no-op probe. */
export function createProbe(path = process.env.MALLORY_PROBE_FILE): Probe {
  return path ? new FileProbe(path) : NOOP;
}
