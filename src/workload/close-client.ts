/** A client of one node; `close` is optional, since a client that holds nothing has nothing to close. */
export interface Closable {
  close?(): Promise<void> | void;
}

/**
 * Closes a client as the workers do, when it is retired or the run ends: a client without `close`
 * holds nothing to release, and a close that throws, rejects or answers synchronously is done with.
 */
export async function closeClient(client: Closable | undefined): Promise<void> {
  if (typeof client?.close !== 'function') return;
  try {
    await client.close();
  } catch {
    // The client is retired either way; what its close says changes nothing.
  }
}
