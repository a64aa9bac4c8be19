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

class FileProbe implements Probe {
  private readonly fd: number;
  private buffer: string[] = [];
  private scheduled = false;

  constructor(path: string) {
    this.fd = openSync(path, 'a');
    process.on('exit', () => {
      this.flush();
    });
  }

  emit(type: string, attrs?: EventAttrs): void {
    const ts = Number(process.hrtime.bigint());
    this.buffer.push(JSON.stringify(attrs ? { ts, type, attrs } : { ts, type }) + '\n');
    // Written once the current turn of the event loop is done: the events of one turn share a
    // write, and none waits for a timer (a fuzzer reacting to an event sees it within a millisecond;
    // a node killed right after an event has written it).
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.flush();
      }).unref();
    }
  }

  flush(): void {
    if (this.buffer.length === 0) return;
    const text = this.buffer.join('');
    this.buffer = [];
    writeSync(this.fd, text);
  }

  close(): void {
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
