import type { Finding } from './checker.js';

/** The recovery findings a crash in the same schedule explains: the node that crashed did not serve. */
const EXPLAINED_BY_A_CRASH: ReadonlySet<string> = new Set(['no-recovery', 'late-recovery']);

/** One piece of a finding made of several: what each check found, as it found it. */
export interface FindingPiece {
  readonly kind: string;
  readonly name: string;
  readonly message: string;
  readonly evidence: unknown;
}

/** The evidence of a crash with what followed from it in the same schedule. */
export interface CrashEvidence {
  /** Every piece, in the order found: crash text, exits, then the recovery that never came. */
  readonly pieces: readonly FindingPiece[];
  /** The nodes that crashed. */
  readonly nodes: readonly string[];
}

function nodeOf(evidence: unknown): string | undefined {
  const node = (evidence as { node?: unknown } | null)?.node;
  return typeof node === 'string' ? node : undefined;
}

/**
 * One finding per root cause in one schedule's findings: a node's crash text, its exit and the
 * recovery that never came (or came late) are one crash finding with all three pieces of evidence,
 * named after its most telling piece (`crash-text` over `unexpected-exit`). Its signature is the
 * set of pieces it has, not the nodes: the same crash on another node in a later schedule is a
 * hit of it. Other findings are left as they are.
 */
export function oneFindingPerCause(findings: readonly Finding[]): Finding[] {
  const isBug = (f: Finding): boolean => f.severity !== 'note' && f.unknown !== true;
  const crashes = findings.filter((f) => isBug(f) && f.kind === 'crash');
  if (crashes.length === 0) return [...findings];
  const explained = findings.filter(
    (f) => isBug(f) && f.kind === 'recovery' && EXPLAINED_BY_A_CRASH.has(f.name),
  );
  const pieces = [...crashes, ...explained];
  if (pieces.length === 1) return [...findings];
  const named = crashes.find((f) => f.name === 'crash-text') ?? crashes[0];
  const names = [...new Set(pieces.map((f) => f.name))].sort();
  const nodes = [...new Set(crashes.map((f) => nodeOf(f.evidence)).filter((n) => n !== undefined))].sort();
  const evidence: CrashEvidence = {
    pieces: pieces.map((f) => ({ kind: f.kind, name: f.name, message: f.message, evidence: f.evidence })),
    nodes,
  };
  const others = pieces.filter((f) => f !== named);
  const merged: Finding = {
    kind: 'crash',
    name: named.name,
    message:
      others.length === 0
        ? named.message
        : `${named.message} (with ${others.map((f) => f.name).join(', ')}: ${others.map((f) => f.message).join('; ')})`,
    evidence,
    signature: `crash/${named.name} ${names.join('+')}`,
  };
  const rest = findings.filter((f) => !pieces.includes(f));
  return [merged, ...rest];
}
