import type { Rng } from '../core/random.js';
import type {
  BankCapability,
  BankClient,
  BankReadResult,
  ClientResult,
  ClusterView,
} from '../systems/system.js';
import type { History } from './history.js';
import { type ClientOp, ClientWorkload } from './client-workload.js';

export interface BankWorkloadOptions {
  readonly concurrency: number;
  /** Total client ops per second across all workers. */
  readonly rate: number;
  readonly timeoutMs: number;
  /** Accounts per schedule, numbered 0 … accounts − 1 in the history. */
  readonly accounts: number;
  /** The money in the bank, spread evenly over the accounts at the start of each schedule. */
  readonly total: number;
  /** Transfers move 1 … this much. */
  readonly maxTransfer: number;
  /** The share of ops that read every balance (the rest transfer). */
  readonly readShare: number;
}

/** Jepsen's bank: a little money over a few accounts, as many reads as transfers. */
export const BANK_DEFAULTS = { accounts: 5, total: 100, maxTransfer: 5, readShare: 0.5 } as const;

type BankOp = ClientOp<BankClient, BankReadResult | ClientResult>;

/** The one "key" the final reads read: the whole bank, in one read. */
const WHOLE_BANK = 'bank';

/**
 * Jepsen's bank workload: a fixed set of accounts holding `total` between them; workers transfer a
 * random amount between two accounts in one transaction (refused, `fail`, when the source holds
 * less), or read every balance in one transaction. The history numbers the accounts as Jepsen does:
 * `transfer` as `{from, to, amount}`, `read` as `null`, completed with `{account: balance, …}`.
 * Checked by `checkBank`: every read holds every account, none negative, summing to the total.
 */
export class BankWorkload extends ClientWorkload<BankClient, BankReadResult | ClientResult> {
  private accounts: string[] = [];
  private readonly openingBalance: number;

  constructor(
    private readonly bank: BankCapability,
    cluster: ClusterView,
    history: History,
    private readonly rng: Rng,
    private readonly options: BankWorkloadOptions,
  ) {
    super(cluster, history, options);
    if (options.accounts < 2 || options.total % options.accounts !== 0) {
      throw new Error(
        `bank workload: ${options.total} cannot be spread evenly over ${options.accounts} accounts (at least 2)`,
      );
    }
    this.openingBalance = options.total / options.accounts;
  }

  protected connect(node: string): BankClient {
    return this.bank.client(node, this.cluster, this.options.timeoutMs, {
      accounts: this.accounts,
      openingBalance: this.openingBalance,
    });
  }

  protected begin(prefix: string): void {
    this.accounts = Array.from({ length: this.options.accounts }, (_, i) => `${prefix}-b${i}`);
  }

  protected usedKeys(): readonly string[] {
    return [WHOLE_BANK];
  }

  protected readOp(): BankOp {
    const numbers = new Map(this.accounts.map((key, i) => [key, i]));
    return {
      f: 'read',
      value: null,
      call: (client) => client.read(),
      // Accounts by number; a key the bank does not have keeps its name (the check reports it).
      completed: (result) =>
        Object.fromEntries(
          Object.entries((result as Extract<BankReadResult, { type: 'ok' }>).value).map(([key, balance]) => [
            String(numbers.get(key) ?? key),
            balance,
          ]),
        ),
    };
  }

  protected nextOp(): BankOp {
    if (this.rng.chance(this.options.readShare)) return this.readOp();
    const from = this.rng.int(this.options.accounts);
    const to = (from + 1 + this.rng.int(this.options.accounts - 1)) % this.options.accounts;
    const amount = this.rng.range(1, this.options.maxTransfer);
    const value = { from, to, amount };
    return {
      f: 'transfer',
      value,
      call: (client) => client.transfer(this.accounts[from], this.accounts[to], amount),
      completed: () => value,
    };
  }
}
