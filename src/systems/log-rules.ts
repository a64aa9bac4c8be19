import type { ParsedLogEvent } from './system.js';

/**
 * One log rule: a line (or the message part of it) that matches `re` is the internal event
 * `type`. `groups` names `re`'s capture groups, in order; each becomes an attribute — a number when
 * the captured text is one (terms, indexes), the text otherwise.
 *
 * ```ts
 * const RULES: LogRule[] = [
 *   { re: /became leader at term (\d+)/, type: 'became-leader', groups: ['term'] },
 *   { re: /stepping down/, type: 'step-down' },
 * ];
 * parseLog = (line: string) => matchLogRules(RULES, line);
 * ```
 */
export interface LogRule {
  readonly re: RegExp;
  readonly type: string;
  readonly groups?: readonly string[];
}

const NUMBER = /^-?\d+(?:\.\d+)?$/;

/** The event of the first rule that matches `text`, or undefined when none does. */
export function matchLogRules(rules: readonly LogRule[], text: string): ParsedLogEvent | undefined {
  for (const rule of rules) {
    const m = rule.re.exec(text);
    if (!m) continue;
    const attrs: Record<string, number | string> = {};
    rule.groups?.forEach((name, i) => {
      const captured = m[i + 1];
      if (captured !== undefined) attrs[name] = NUMBER.test(captured) ? Number(captured) : captured;
    });
    return Object.keys(attrs).length > 0 ? { type: rule.type, attrs } : { type: rule.type };
  }
  return undefined;
}
