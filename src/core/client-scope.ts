import { AsyncLocalStorage } from 'node:async_hooks';

const adapters = new AsyncLocalStorage<string>();
const clients = new AsyncLocalStorage<ClientScope>();

/** Runs `fn` as the campaign of `adapter`: client scopes opened inside it name that adapter. */
export function inAdapterScope<T>(adapter: string, fn: () => T): T {
  return adapters.run(adapter, fn);
}

/** What a client's library threw outside any call: the op in flight ends with it, as `info`. */
export class ClientThrewError extends Error {
  constructor(readonly thrown: unknown) {
    super(`the client threw outside any call (a socket handler or a timer): ${messageOf(thrown)}`);
    this.name = 'ClientThrewError';
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * One client of one node. Its creation, calls and close run inside the scope, so what its library
 * throws later, from a socket handler or a timer it set up, is traced back to it (the async
 * context of a callback is the one it was registered in) rather than ending the run.
 */
export class ClientScope {
  readonly adapter = adapters.getStore();
  private failure: ClientThrewError | undefined;
  private abortCall: ((error: ClientThrewError) => void) | undefined;

  constructor(readonly node: string) {}

  /** Set once the client's library threw outside a call: the client is to be retired. */
  get failed(): ClientThrewError | undefined {
    return this.failure;
  }

  run<T>(fn: () => T): T {
    return clients.run(this, fn);
  }

  /** Runs a call of the client in its scope; it ends at once, rejected, if the client fails meanwhile. */
  call<T>(fn: () => T | Promise<T>): Promise<T> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<T>((resolve, reject) => {
      this.abortCall = reject;
      Promise.resolve(clients.run(this, fn))
        .then(resolve, reject)
        .finally(() => {
          this.abortCall = undefined;
        });
    });
  }

  /** Records what the library threw; answers whether a call was in flight (it ends with the error). */
  fail(thrown: unknown): boolean {
    const failure = new ClientThrewError(thrown);
    this.failure ??= failure;
    const inFlight = this.abortCall;
    this.abortCall = undefined;
    inFlight?.(failure);
    return inFlight !== undefined;
  }
}

/** What became of an error thrown outside every call, when it came from a client. */
export interface Contained {
  /** The line to print, the first time this node's client threw this. */
  readonly say: string | undefined;
}

const said = new Set<string>();

/**
 * Called from the process's uncaught-exception and unhandled-rejection handlers: if `error` was
 * thrown in a client's scope, it becomes that client's failure and the run goes on. Undefined when
 * the error belongs to no client (an internal error).
 */
export function containClientError(error: unknown): Contained | undefined {
  const scope = clients.getStore();
  if (scope === undefined) return undefined;
  const inFlight = scope.fail(error);
  const adapter = scope.adapter ?? 'the system adapter';
  const key = `${adapter}\0${scope.node}\0${messageOf(error)}`;
  if (said.has(key)) return { say: undefined };
  said.add(key);
  const outcome = inFlight
    ? 'its op in flight is recorded as info with that error'
    : 'it is replaced before its next op';
  return {
    say: `${adapter}: the client of ${scope.node} threw outside any call Mallory made (from a socket handler or a timer): ${messageOf(error)}; ${outcome} and the run goes on (said once per node and message): make the client catch it and answer through its call`,
  };
}
