import { randomUUID } from 'node:crypto';
import { unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { UsageError } from '../../core/errors.js';
import { errorCode, makeDirs } from '../../core/fs.js';

/**
 * Makes `dir` and checks this process can write there, before anything is started: a read-only
 * store is refused in one line naming it (`what`: the command and the folder, as the line begins).
 */
export function requireWritableDir(dir: string, what: string): void {
  makeDirs(dir, what);
  const probe = join(dir, `.probe-${process.pid}-${randomUUID().slice(0, 8)}`);
  try {
    writeFileSync(probe, '');
    unlinkSync(probe);
  } catch (e) {
    throw new UsageError(
      'bad-store',
      `${what} ${dir}: cannot write there (${errorCode(e)}): make the store writable`,
    );
  }
}
