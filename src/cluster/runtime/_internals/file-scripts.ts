import { shellQuote } from '../../../core/shell.js';

/**
 * The shell text a remote runtime (SSH, `docker exec`) runs for its file operations on the host:
 * the same on every host, each failing (non-zero) when it could not do what it says.
 */

/** Makes a dir and its parents (nothing when it is there). */
export function mkdirScript(path: string): string {
  return `mkdir -p ${shellQuote(path)}`;
}

/** Removes a file or dir and all under it (nothing when it is not there). */
export function removeScript(path: string): string {
  return `rm -rf ${shellQuote(path)}`;
}

/** Leaves a dir there and empty (made when missing, everything under it removed). */
export function emptyScript(path: string): string {
  return `${mkdirScript(path)} && find ${shellQuote(path)} -mindepth 1 -delete`;
}
