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
 *   // A role the text names in its own words: `role` is what the report's role lanes read.
 *   { re: /Peer state changed: leading/, type: 'leading', attrs: { role: 'leader' } },
 * ];
 * parseLog = (line: string) => matchLogRules(RULES, line);
 * ```
 */
export interface LogRule {
  readonly re: RegExp;
  readonly type: string;
  readonly groups?: readonly string[];
  /**
   * Attributes every match carries, before the captured ones: `{ role: 'leader' }` says the node's
   * role (`leader`, `follower`, `candidate`) when its log says it in words no heuristic knows.
   */
  readonly attrs?: Readonly<Record<string, number | string>>;
}

const NUMBER = /^-?\d+(?:\.\d+)?$/;

/** The event of the first rule that matches `text`, or undefined when none does. */
export function matchLogRules(rules: readonly LogRule[], text: string): ParsedLogEvent | undefined {
  for (const rule of rules) {
    const m = rule.re.exec(text);
    if (!m) continue;
    const attrs: Record<string, number | string> = { ...rule.attrs };
    rule.groups?.forEach((name, i) => {
      const captured = m[i + 1];
      if (captured !== undefined) attrs[name] = NUMBER.test(captured) ? Number(captured) : captured;
    });
    return Object.keys(attrs).length > 0 ? { type: rule.type, attrs } : { type: rule.type };
  }
  return undefined;
}
