import type { Bank, BankReadResult, ClusterView, GuardedTxnClient } from '../../../src/systems/system.js';
import { bankViaTransactions } from '../../../src/workload/_internals/bank-via-txn.js';

export interface TransfersOutcome {
  /** Acknowledged transfers, per node. */
  readonly ok: readonly number[];
  /** The bank read once every transfer has answered. */
  readonly read: BankReadResult;
}

/**
 * Runs `perNode` transfers from each of `nodes` at once through a system's guarded transactions
 * (three accounts, each starting at `openingBalance`), then reads the bank. A transfer with an
 * unknown outcome throws: the adapter test means a healthy cluster.
 */
export async function concurrentTransfers(
  guardedClient: (node: string, cluster: ClusterView, timeoutMs: number) => GuardedTxnClient,
  cluster: ClusterView,
  options: { nodes: readonly string[]; bank: Bank; perNode: number; timeoutMs: number },
): Promise<TransfersOutcome> {
  const { bank, perNode, timeoutMs } = options;
  const capability = bankViaTransactions(guardedClient);
  const n = bank.accounts.length;
  const transfers = async (node: string, offset: number): Promise<number> => {
    const client = capability.client(node, cluster, timeoutMs, bank);
    let ok = 0;
    try {
      for (let i = 0; i < perNode; i++) {
        const from = bank.accounts[(i + offset) % n];
        const to = bank.accounts[(i + offset + 1) % n];
        const result = await client.transfer(from, to, 1 + (i % 4));
        if (result.type === 'info') throw new Error(`transfer ${i} on ${node}: ${result.error}`);
        if (result.type === 'ok') ok++;
      }
    } finally {
      await client.close();
    }
    return ok;
  };
  const ok = await Promise.all(options.nodes.map((node, i) => transfers(node, i)));
  const reader = capability.client(options.nodes[0], cluster, timeoutMs, bank);
  const read = await reader.read();
  await reader.close();
  return { ok, read };
}
