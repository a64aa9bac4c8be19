import type {
  Bank,
  BankCapability,
  BankClient,
  BankReadResult,
  ClientResult,
  GuardedTxnClient,
  MicroOp,
  TransactionsCapability,
  TxnClientContext,
} from '../../systems/system.js';

/** A bank's accounts are registers: its client serves rw-register transactions. */
const BANK_CONTEXT: TxnClientContext = { workload: 'rw-register', runs: 'bank' };

/**
 * A bank kept in registers by guarded transactions: a read is one transaction reading every
 * account; a transfer reads both balances in one transaction, then writes both new balances in a
 * second one guarded by what it read, so a balance changed in between (a concurrent transfer)
 * refuses it, nothing written. Whatever the transactions promise, so does the bank. An account
 * holding nothing holds the bank's opening balance.
 */
export function bankViaTransactions(
  guardedClient: NonNullable<TransactionsCapability['guardedClient']>,
): BankCapability {
  return {
    client: (node, cluster, timeoutMs, bank) =>
      new TxnBankClient(guardedClient(node, cluster, timeoutMs, BANK_CONTEXT), bank),
  };
}

/** What a register read found: a number, nothing (`null`), or something a bank never writes. */
type Held =
  { readonly ok: true; readonly value: number | null } | { readonly ok: false; readonly error: string };

function held(op: MicroOp | undefined, key: string): Held {
  if (op?.[0] !== 'r' || op[1] !== key) return { ok: false, error: `no read of ${JSON.stringify(key)}` };
  const value = op[2];
  if (value === null || typeof value === 'number') return { ok: true, value };
  return { ok: false, error: `account ${JSON.stringify(key)} holds ${JSON.stringify(value)}, not a balance` };
}

class TxnBankClient implements BankClient {
  constructor(
    private readonly txn: GuardedTxnClient,
    private readonly bank: Bank,
  ) {}

  async transfer(from: string, to: string, amount: number): Promise<ClientResult> {
    const read = await this.txn.txn([
      ['r', from, null],
      ['r', to, null],
    ]);
    // A read-only transaction wrote nothing, whatever its outcome.
    if (read.type !== 'ok') return { type: 'fail', error: `balances not read: ${read.error}` };
    const source = held(read.value[0], from);
    const target = held(read.value[1], to);
    if (!source.ok) return { type: 'fail', error: source.error };
    if (!target.ok) return { type: 'fail', error: target.error };
    const fromBalance = source.value ?? this.bank.openingBalance;
    const toBalance = target.value ?? this.bank.openingBalance;
    if (fromBalance < amount) {
      return {
        type: 'fail',
        error: `account ${JSON.stringify(from)} holds ${fromBalance}, less than ${amount}`,
      };
    }
    const result = await this.txn.txnIf(
      [
        [from, source.value],
        [to, target.value],
      ],
      [
        ['w', from, fromBalance - amount],
        ['w', to, toBalance + amount],
      ],
    );
    return result.type === 'ok' ? { type: 'ok' } : result;
  }

  async read(): Promise<BankReadResult> {
    const { accounts, openingBalance } = this.bank;
    const result = await this.txn.txn(accounts.map((account): MicroOp => ['r', account, null]));
    if (result.type !== 'ok') return result;
    const balances: Record<string, number> = {};
    for (const [i, account] of accounts.entries()) {
      const h = held(result.value[i], account);
      if (!h.ok) return { type: 'info', error: h.error };
      balances[account] = h.value ?? openingBalance;
    }
    return { type: 'ok', value: balances };
  }

  close(): Promise<void> {
    return this.txn.close();
  }
}
