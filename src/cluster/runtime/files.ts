import { shellQuote } from '../../core/shell.js';
import { emptyScript, mkdirScript, removeScript } from './_internals/file-scripts.js';
import type { ExecResult, NodeRuntime } from './runtime.js';

/** What the shell-text operations need of a runtime. */
type Shell = Pick<NodeRuntime, 'host' | 'exec'>;

/**
 * The file operations on a runtime's host, written once over its verbs (`exec`, `put`, `get`): the
 * same shell text on this machine, on an SSH host and in a container.
 */

/** Runs shell text there as root; rejects, naming the host and the text, when it fails. */
async function must(runtime: Shell, script: string): Promise<ExecResult> {
  const result = await runtime.exec(['/bin/sh', '-c', script]);
  if (result.code !== 0) {
    throw new Error(
      `host ${runtime.host}: \`${script}\` failed (exit ${result.code}): ${result.stderr.trim()}`,
    );
  }
  return result;
}

/** Creates a dir and its parents. */
export async function mkdirOn(runtime: Shell, path: string): Promise<void> {
  await must(runtime, mkdirScript(path));
}

/** Removes a file or a dir with everything in it; a missing one is no error. */
export async function removeOn(runtime: Shell, path: string): Promise<void> {
  await must(runtime, removeScript(path));
}

/** Removes what a dir holds, the dir itself staying (made when missing). */
export async function emptyOn(runtime: Shell, path: string): Promise<void> {
  await must(runtime, emptyScript(path));
}

/** Whether `command` (a path, or a name looked up in the host's PATH) can be run there. */
export async function isRunnableOn(runtime: Shell, command: string): Promise<boolean> {
  const test = command.includes('/') ? `test -x ${shellQuote(command)}` : `command -v ${shellQuote(command)}`;
  return (await runtime.exec(['/bin/sh', '-c', `${test} >/dev/null 2>&1`])).code === 0;
}

/** Whether a file or dir exists there. */
export async function existsOn(runtime: Shell, path: string): Promise<boolean> {
  return (await runtime.exec(['test', '-e', path])).code === 0;
}

/** Copies a local file to the host, with its mode, whole or not at all. */
export function uploadTo(runtime: Pick<NodeRuntime, 'put'>, localPath: string, path: string): Promise<void> {
  return runtime.put(path, localPath);
}

/** Writes `data` to a file there (a command's stdin, so no file here and no transfer session). */
export async function writeFileOn(runtime: Shell, path: string, data: string | Buffer): Promise<void> {
  const result = await runtime.exec(['/bin/sh', '-c', 'cat > "$1"', 'sh', path], { input: data });
  if (result.code !== 0) {
    throw new Error(
      `host ${runtime.host}: cannot write ${path} (exit ${result.code}): ${result.stderr.trim()}`,
    );
  }
}

/** Reads a file there. */
export function readFileOn(runtime: Pick<NodeRuntime, 'get'>, path: string): Promise<Buffer> {
  return runtime.get(path);
}
