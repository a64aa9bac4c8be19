import type {
  ClientResult,
  SetCapability,
  SetClient,
  SetReadResult,
  TransactionsCapability,
  TxnClient,
  TxnClientContext,
} from '../../systems/system.js';

/** A set is a list: its client serves list-append transactions. */
const SET_CONTEXT: TxnClientContext = { workload: 'list-append', runs: 'set' };

/**
 * A set kept as a list by `list-append` transactions: an add is one append, a read one list read
 * (a key holding nothing is the empty set). Whatever the transactions promise, so does the set.
 */
export function setsViaTransactions(transactions: TransactionsCapability): SetCapability {
  return {
    client: (node, cluster, timeoutMs) =>
      new TxnSetClient(transactions.client(node, cluster, timeoutMs, SET_CONTEXT)),
  };
}

class TxnSetClient implements SetClient {
  constructor(private readonly txn: TxnClient) {}

  async add(key: string, element: number): Promise<ClientResult> {
    const result = await this.txn.txn([['append', key, element]]);
    return result.type === 'ok' ? { type: 'ok' } : result;
  }

  async read(key: string): Promise<SetReadResult> {
    const result = await this.txn.txn([['r', key, null]]);
    if (result.type !== 'ok') return result;
    const read = result.value[0] as readonly ['r', string, unknown] | undefined;
    const list = read?.[2] ?? [];
    if (!Array.isArray(list) || read?.[0] !== 'r') {
      return { type: 'info', error: `a list read answered ${JSON.stringify(result.value)}` };
    }
    return { type: 'ok', value: list as readonly number[] };
  }

  close(): Promise<void> {
    return this.txn.close();
  }
}
