import type { BankCapability, SystemAdapter } from '../systems/system.js';
import { BANK_DEFAULTS, BankWorkload } from './bank.js';
import { COUNTER_DEFAULTS, CounterWorkload } from './counter.js';
import { RegisterWorkload } from './register.js';
import { SET_DEFAULTS, SetWorkload } from './set.js';
import { TxnWorkload } from './txn.js';
import { type WorkloadDefinition, type WorkloadName, WORKLOADS } from './workload.js';
import { bankViaTransactions } from './_internals/bank-via-txn.js';
import { setsViaTransactions } from './_internals/set-via-txn.js';

/** The register workload's keys in use at once, and the invocations a key gets before it is retired. */
const REGISTER_KEYS = 5;
const OPS_PER_KEY = 150;

/**
 * Why `system` cannot run the workload `name`, in one line that says what it can run instead;
 * undefined when it can.
 */
export function workloadRefusal(name: WorkloadName, system: SystemAdapter): string | undefined {
  const lacks = BUILTIN_WORKLOADS[name].unsupported(system);
  if (lacks === undefined) return undefined;
  const names = WORKLOADS.filter((other) => BUILTIN_WORKLOADS[other].unsupported(system) === undefined);
  const runnable =
    names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}`;
  return `system ${system.name} ${lacks}: use --workload ${runnable}`;
}

function txnWorkload(name: 'list-append' | 'rw-register'): WorkloadDefinition {
  return {
    name,
    unsupported: (system) =>
      system.transactions?.workloads.includes(name) ? undefined : `does not run ${name} transactions`,
    create: ({ system, cluster, history, rng, concurrency, rate, timeoutMs }) =>
      new TxnWorkload(system.transactions!, cluster, history, rng, {
        workload: name,
        concurrency,
        rate,
        timeoutMs,
      }),
  };
}

/** The sets a system keeps: its own, or lists kept by its `list-append` transactions. */
function setsOf(system: SystemAdapter): ReturnType<typeof setsViaTransactions> | undefined {
  if (system.sets) return system.sets;
  return system.transactions?.workloads.includes('list-append')
    ? setsViaTransactions(system.transactions)
    : undefined;
}

/** The bank a system keeps: its own, or registers kept by its guarded transactions. */
function bankOf(system: SystemAdapter): BankCapability | undefined {
  if (system.bank) return system.bank;
  const transactions = system.transactions;
  return transactions?.guardedClient
    ? bankViaTransactions(transactions.guardedClient.bind(transactions))
    : undefined;
}

/** Every built-in workload, by name; each says which client capability it needs. */
export const BUILTIN_WORKLOADS: Readonly<Record<WorkloadName, WorkloadDefinition>> = {
  register: {
    name: 'register',
    unsupported: () => undefined,
    create: ({ system, cluster, history, rng, concurrency, rate, timeoutMs }) =>
      new RegisterWorkload(system, cluster, history, rng, {
        concurrency,
        rate,
        timeoutMs,
        keys: REGISTER_KEYS,
        opsPerKey: OPS_PER_KEY,
        cas: system.supportsCas ?? true,
      }),
  },
  'list-append': txnWorkload('list-append'),
  'rw-register': txnWorkload('rw-register'),
  set: {
    name: 'set',
    unsupported: (system) =>
      setsOf(system) === undefined ? 'keeps no sets (a set client, or list-append transactions)' : undefined,
    create: ({ system, cluster, history, rng, concurrency, rate, timeoutMs }) =>
      new SetWorkload(setsOf(system)!, cluster, history, rng, {
        concurrency,
        rate,
        timeoutMs,
        ...SET_DEFAULTS,
      }),
  },
  counter: {
    name: 'counter',
    unsupported: (system) =>
      system.counters === undefined ? 'keeps no counters (a counter client with an atomic add)' : undefined,
    create: ({ system, cluster, history, rng, concurrency, rate, timeoutMs }) =>
      new CounterWorkload(system.counters!, cluster, history, rng, {
        concurrency,
        rate,
        timeoutMs,
        ...COUNTER_DEFAULTS,
      }),
  },
  bank: {
    name: 'bank',
    unsupported: (system) =>
      bankOf(system) === undefined
        ? 'keeps no bank (a bank client, or transactions that can be guarded)'
        : undefined,
    create: ({ system, cluster, history, rng, concurrency, rate, timeoutMs }) =>
      new BankWorkload(bankOf(system)!, cluster, history, rng, {
        concurrency,
        rate,
        timeoutMs,
        ...BANK_DEFAULTS,
      }),
  },
};
