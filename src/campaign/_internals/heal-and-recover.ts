import type { LiveRun } from './live-run.js';

/** How the cluster came back after a schedule's faults were healed. */
export interface Recovery {
  /** What healing could not undo, as the nemesis says it. */
  readonly resetErrors: readonly string[];
  /** Whether the system served again within the recovery timeout. */
  readonly recovered: boolean;
  /** How long it took to serve again; null when it did not. */
  readonly recoveryMs: number | null;
}

/** Heals every fault and waits for the system to serve again; the reset's ops are dropped. */
export async function healAndRecover(live: LiveRun): Promise<Recovery> {
  const { config, signal, state, parts, history } = live;
  state.phase = 'resetting';
  const resetErrors = await parts.nemesis.healAll();
  const recoveryStart = Date.now();
  const recovered = await parts.cluster.waitReady(config.recoveryTimeoutMs, signal);
  const recoveryMs = recovered ? Date.now() - recoveryStart : null;
  history.takeSegment(); // the reset's nemesis ops belong to no schedule's check
  state.phase = 'checking';
  return { resetErrors, recovered, recoveryMs };
}
