import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

import { UsageError } from '../../core/errors.js';
import type { LaunchSpec } from '../node-system.js';
import { isRunnableOn } from '../runtime/files.js';
import type { NodeRuntime } from '../runtime/runtime.js';

/**
 * What an adapter's `launch(node)` returned, checked before anything is spawned: a spec (or a
 * Promise of one, awaited) whose `command` exists and can be run. A user's adapter that gets this
 * wrong hears which node and what to fix, not "spec.args is not iterable" or a spawn stack.
 */
export async function checkedLaunchSpec(
  returned: unknown,
  node: string,
  cwd: string,
  host?: NodeRuntime,
): Promise<LaunchSpec> {
  const spec: unknown = isThenable(returned) ? await returned : returned;
  const where = `the system adapter's launch(${node})`;
  if (typeof spec !== 'object' || spec === null) {
    throw new UsageError('bad-launch', `${where} returned ${String(spec)}: return {command, args}`);
  }
  const { command, args } = spec as Record<string, unknown>;
  if (typeof command !== 'string' || command === '') {
    throw new UsageError('bad-launch', `${where}: command must be a non-empty string`);
  }
  if (!Array.isArray(args) || !args.every((a) => typeof a === 'string')) {
    throw new UsageError('bad-launch', `${where}: args must be an array of strings`);
  }
  const { built } = spec as Record<string, unknown>;
  if (built !== undefined && typeof built !== 'boolean') {
    throw new UsageError('bad-launch', `${where}: built must be true or false`);
  }
  if (built === true && !isAbsolute(command)) {
    throw new UsageError(
      'bad-launch',
      `${where}: a built command must be an absolute path on this machine (got ${command})`,
    );
  }
  // A built program is checked here: it is copied to a host that lacks it.
  if (host !== undefined && built !== true) {
    if (!(await isRunnableOn(host, command))) {
      throw new UsageError(
        'missing-binary',
        `${where}: command ${command} not found or not executable on host ${host.host}: install it there or give its full path`,
      );
    }
  } else if (!isRunnable(command, cwd)) {
    throw new UsageError(
      'missing-binary',
      `${where}: command ${command} not found or not executable: install it or give its full path`,
    );
  }
  return spec as LaunchSpec;
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function';
}

function isRunnable(command: string, cwd: string): boolean {
  const candidates = command.includes('/')
    ? [isAbsolute(command) ? command : resolve(cwd, command)]
    : (process.env.PATH ?? '')
        .split(delimiter)
        .filter((d) => d !== '')
        .map((d) => join(d, command));
  return candidates.some((file) => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}
