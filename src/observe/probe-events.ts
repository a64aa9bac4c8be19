import type { Event } from '../core/event.js';

/**
 * Probe JSON lines (`{ts, type, attrs?}`, written by `src/probe`) → events with source `probe`.
 * Sends and receives carry `attrs.msg`, which the timeline matches into happens-before edges.
 *
 * Usage: `new FileTail(probeFile, (line) => { const e = parseProbeLine(node, line); if (e) timeline.ingest(e); })`.
 * A malformed line gives `undefined` (a node killed mid-write leaves half a line).
 */
export function parseProbeLine(node: string, line: string): Event | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { ts, type, attrs } = parsed as Record<string, unknown>;
  if (typeof ts !== 'number' || !Number.isFinite(ts) || typeof type !== 'string' || type === '') {
    return undefined;
  }
  if (attrs === undefined) return { ts, node, source: 'probe', type };
  if (typeof attrs !== 'object' || attrs === null || Array.isArray(attrs)) return undefined;
  const clean: Record<string, number | string> = {};
  for (const [k, v] of Object.entries(attrs as Record<string, unknown>)) {
    if (typeof v === 'number' || typeof v === 'string') clean[k] = v;
  }
  return { ts, node, source: 'probe', type, attrs: clean };
}
