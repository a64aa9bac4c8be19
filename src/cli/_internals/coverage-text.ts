/** Each abstraction's prefix in the coverage metrics (`states_causal`, `transitions_artifact`, …). */
const STATES = 'states_';
const TRANSITIONS = 'transitions_';

/** `3 causal, 2 artifact` from the metrics named `<prefix><abstraction>`, undefined when none. */
function byAbstraction(metrics: Readonly<Record<string, number>>, prefix: string): string | undefined {
  const parts = Object.entries(metrics)
    .filter(([k]) => k.startsWith(prefix) && !k.endsWith('_auc'))
    .map(([k, v]) => `${v} ${k.slice(prefix.length)}`);
  return parts.length > 0 ? parts.join(', ') : undefined;
}

/**
 * The run's coverage and cost on one line for the terminal, e.g. `coverage: states 3 causal, 2
 * artifact; transitions 3 causal; 15 event types; event pairs 63 within a node, 45 across; fuzzer
 * peak 111 MB, 0 events shed (every figure: results.json "coverage")`. Undefined when the run
 * measured none (a fixed schedule).
 */
export function describeCoverage(metrics: Readonly<Record<string, number>>): string | undefined {
  const m = metrics;
  const parts: string[] = [];
  const states = byAbstraction(m, STATES);
  if (states !== undefined) parts.push(`states ${states}`);
  const transitions = byAbstraction(m, TRANSITIONS);
  if (transitions !== undefined) parts.push(`transitions ${transitions}`);
  if (m.event_types !== undefined) parts.push(`${m.event_types} event types`);
  if (m.intra_pairs !== undefined || m.cross_pairs !== undefined)
    parts.push(`event pairs ${m.intra_pairs ?? 0} within a node, ${m.cross_pairs ?? 0} across`);
  const cost: string[] = [];
  if (m.fuzzer_peak_rss_mb !== undefined) cost.push(`fuzzer peak ${m.fuzzer_peak_rss_mb} MB`);
  if (m.events_shed !== undefined) cost.push(`${m.events_shed} events shed`);
  if (parts.length === 0 && cost.length === 0) return undefined;
  const said = [parts.join('; '), cost.join(', ')].filter((p) => p !== '').join('; ');
  return `coverage: ${said} (every figure: results.json "coverage")`;
}
