import { statSync } from 'node:fs';

import { shellQuote } from '../../core/shell.js';
import type { SshConnection } from './ssh-connection.js';
import type { SshShells } from './ssh-shells.js';

/** Bytes in and out of a host over the connection's SFTP session. */
export class SshTransfer {
  constructor(
    private readonly connection: SshConnection,
    private readonly shells: SshShells,
  ) {}

  async readFile(path: string): Promise<Buffer> {
    const sftp = await this.connection.sftp();
    return new Promise((resolve, reject) => {
      sftp.readFile(path, (error: Error | undefined, data: Buffer) => {
        if (error) reject(error);
        else resolve(data);
      });
    });
  }

  /**
   * Copies a local file to the host with its mode, through a temp file renamed over `path`: a
   * reader never sees half of it, and a host that shares this machine's files (the same path on
   * both) gets the file back whole instead of truncating it while it is read.
   */
  async upload(localPath: string, path: string): Promise<void> {
    const sftp = await this.connection.sftp();
    const mode = statSync(localPath).mode & 0o7777;
    const temp = `${path}.mallory-upload-${process.pid}`;
    await new Promise<void>((resolve, reject) => {
      sftp.fastPut(localPath, temp, { mode }, (error) => {
        if (error) reject(error);
        else resolve();
      });
    });
    await this.shells.must(`mv -f ${shellQuote(temp)} ${shellQuote(path)}`);
  }
}
