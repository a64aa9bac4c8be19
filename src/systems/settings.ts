import { UsageError } from '../core/errors.js';
import type { SystemDefinition } from './system.js';

const SETTING = /^([A-Za-z][\w.-]*)=(.*)$/;

/**
 * `--set NAME=VALUE` flags (repeatable) → settings by name. Only the shape is checked here: which
 * names and values a system takes is known once it is loaded ({@link resolveSettings}).
 */
export function parseSetFlags(flags: readonly string[]): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const flag of flags) {
    const match = SETTING.exec(flag.trim());
    if (!match)
      throw new UsageError(
        'bad-flag',
        `--set needs NAME=VALUE, e.g. --set appendfsync=always; got "${flag}"`,
      );
    const [, name, value] = match;
    if (name in settings && settings[name] !== value) {
      throw new UsageError(
        'bad-flag',
        `--set ${name} given twice (${settings[name]}, ${value}): give it once`,
      );
    }
    settings[name] = value;
  }
  return settings;
}

/** What a system's settings allow, in one line (`appendfsync=everysec|always`), for errors and help. */
export function describeSettings(definition: Pick<SystemDefinition, 'name' | 'settings'>): string {
  const settings = Object.entries(definition.settings ?? {});
  if (settings.length === 0) return `${definition.name} has no settings`;
  return `${definition.name} takes ${settings.map(([name, s]) => `${name}=${s.values.join('|')}`).join(', ')}`;
}

/**
 * Every setting `definition` declares, at the value `given` chooses or its default. A name the
 * system does not declare, or a value it does not allow, is a `UsageError` saying what it takes.
 */
export function resolveSettings(
  definition: Pick<SystemDefinition, 'name' | 'settings'>,
  given: Readonly<Record<string, string>>,
): Record<string, string> {
  const declared = definition.settings ?? {};
  for (const [name, value] of Object.entries(given)) {
    const setting = Object.hasOwn(declared, name) ? declared[name] : undefined;
    if (setting === undefined) {
      throw new UsageError(
        'unknown-setting',
        `--set ${name}: unknown setting: ${describeSettings(definition)}`,
      );
    }
    if (!setting.values.includes(value)) {
      throw new UsageError(
        'bad-setting',
        `--set ${name}=${value}: ${definition.name} takes ${name}=${setting.values.join('|')} (default ${setting.default})`,
      );
    }
  }
  return Object.fromEntries(
    Object.entries(declared).map(([name, setting]) => [
      name,
      Object.hasOwn(given, name) ? given[name] : setting.default,
    ]),
  );
}
