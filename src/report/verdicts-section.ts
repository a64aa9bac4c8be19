import { describeRunVerdict, validWord, type Valid } from '../core/verdict.js';
import { escapeXml } from './plot.js';
import type { Results } from './results.js';

/** The classes and colours of the three answers. */
export const VERDICT_STYLE = `
.verdict-valid { color: #2a7d2a; } .verdict-invalid { color: #c00000; font-weight: bold; }
.verdict-unknown { color: #b36b00; }
`;

/** A verdict as a word in its colour. */
export function verdictSpan(valid: Valid): string {
  const word = validWord(valid);
  return `<span class="verdict-${word}">${word}</span>`;
}

/** The run's verdict in one line, its words in colour (the header's `verdict` row). */
export function runVerdictLine(results: Results): string {
  const [, ...rest] = describeRunVerdict(results.verdict).split(' — ');
  return `${verdictSpan(results.verdict.valid)}${rest.length > 0 ? ` — ${escapeXml(rest.join(' — '))}` : ''}`;
}

/**
 * Each check's tally over the run, then every schedule's answers, one column per check: a cell says
 * valid, invalid (with what it found) or unknown (with why), and the ops it checked and its time.
 */
export function verdictsSection(results: Results): string {
  const { verdict, schedules } = results;
  if (schedules.length === 0) {
    return '<h2 id="verdicts">Verdicts</h2>\n<p class="none">No schedule was checked.</p>';
  }
  const tally = verdict.checkers.map(
    (t) =>
      `<tr><td>${escapeXml(t.checker)}</td><td>${t.schedules}</td><td>${t.valid}</td><td>${t.invalid}</td><td>${t.unknown}</td></tr>`,
  );
  const names = verdict.checkers.map((t) => t.checker);
  const rows = schedules.map((s) => {
    const cells = names.map((name) => {
      const c = s.checkers.find((x) => x.checker === name);
      if (c === undefined) return '<td class="none">not run</td>';
      const why =
        c.valid === false
          ? c.findings.join(', ')
          : c.valid === 'unknown'
            ? (c.reason ?? 'no reason given')
            : '';
      const cost = c.ops !== null ? ` <small>${c.ops} ops, ${c.ms ?? '?'} ms</small>` : '';
      return `<td>${verdictSpan(c.valid)}${cost}${why !== '' ? `<br><small>${escapeXml(why)}</small>` : ''}</td>`;
    });
    // Numbered from 1, as in the rest of the report and on the terminal.
    return `<tr><td>${s.schedule + 1}</td><td>${verdictSpan(s.valid)}</td>${cells.join('')}</tr>`;
  });
  return [
    '<h2 id="verdicts">Verdicts</h2>',
    `<p>The run: ${runVerdictLine(results)}. Each check after every schedule says valid, invalid, or unknown (it could not tell, and why); the run is invalid if any schedule was, else unknown if any was, else valid.</p>`,
    '<table class="verdict-tally"><tr><th>check</th><th>schedules</th><th>valid</th><th>invalid</th><th>unknown</th></tr>',
    ...tally,
    '</table>',
    '<p></p>',
    `<table class="verdict-schedules"><tr><th>schedule</th><th>verdict</th>${names.map((n) => `<th>${escapeXml(n)}</th>`).join('')}</tr>`,
    ...rows,
    '</table>',
  ].join('\n');
}
