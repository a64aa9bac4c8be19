import type { ScheduleEntry } from '../nemesis/nemesis.js';
import type { KnownIssue } from '../systems/system.js';
import type { Finding } from './checker.js';

/** A crash a system's declared known issue explains: the issue and the node. */
export interface KnownCrash {
  readonly issue: KnownIssue;
  readonly node: string;
}

interface CrashEvidence {
  readonly node?: unknown;
  readonly lines?: unknown;
}

/**
 * The crash findings (`crash/*`, one node each) a declared known issue of the system explains: a
 * fault the issue names ran on that node earlier in the schedule, and the node's own lines that
 * the finding quotes match the issue's `line`. Each becomes a note that names the issue (kept in
 * the history and on the terminal, no bug record); the others are left as they are. A crash with
 * no quoted line, on a node no named fault touched, or whose lines do not match stays a finding.
 */
export function markKnownCrashes(
  findings: readonly Finding[],
  issues: readonly KnownIssue[],
  faults: readonly Pick<ScheduleEntry, 'f' | 'nodes'>[],
): { findings: Finding[]; known: KnownCrash[] } {
  const known: KnownCrash[] = [];
  const marked = findings.map((finding) => {
    if (finding.kind !== 'crash' || finding.severity === 'note') return finding;
    const evidence = (finding.evidence ?? {}) as CrashEvidence;
    const node = typeof evidence.node === 'string' ? evidence.node : undefined;
    const lines = Array.isArray(evidence.lines) ? evidence.lines.filter((l) => typeof l === 'string') : [];
    if (node === undefined || lines.length === 0) return finding;
    const issue = issues.find(
      (i) =>
        faults.some((f) => i.after.includes(f.f) && (f.nodes ?? []).includes(node)) &&
        lines.some((l) => i.line.test(l)),
    );
    if (issue === undefined) return finding;
    known.push({ issue, node });
    return { ...finding, severity: 'note' as const, message: knownMessage(issue, finding.message) };
  });
  return { findings: marked, known };
}

/**
 * A `no-recovery` every node of which that did not serve is a node whose crash a known issue
 * explains (`markKnownCrashes`): a note naming the issue, the rest of the message kept. A node
 * that did not serve for any other reason keeps it a finding.
 */
export function markKnownNoRecovery(finding: Finding, known: readonly KnownCrash[]): Finding {
  if (finding.kind !== 'recovery' || finding.name !== 'no-recovery' || finding.severity === 'note')
    return finding;
  if (known.length === 0) return finding;
  const nodes = (finding.evidence as { nodes?: unknown } | undefined)?.nodes;
  if (!Array.isArray(nodes)) return finding;
  const notServing = nodes
    .filter(
      (n): n is { node: string; read?: { type?: unknown } } =>
        typeof (n as { node?: unknown }).node === 'string',
    )
    .filter((n) => n.read?.type !== 'ok')
    .map((n) => n.node);
  if (notServing.length === 0) return finding;
  const issues = notServing.map((node) => known.find((k) => k.node === node)?.issue);
  if (issues.some((i) => i === undefined)) return finding;
  const issue = issues[0] as KnownIssue;
  return { ...finding, severity: 'note', message: knownMessage(issue, finding.message) };
}

function knownMessage(issue: KnownIssue, message: string): string {
  return `a known issue of the system (${issue.id}${issue.url !== undefined ? `, ${issue.url}` : ''}): ${issue.why}: ${message}`;
}
