/**
 * A refused connection in an op's error: the node's port was closed (the node is down), so the
 * request never left. Such fails come in floods while a node is killed and say nothing about the
 * system's logic, so runs count them apart from other fails (`refused`).
 */
const REFUSED = /ECONNREFUSED|connection refused/i;

/** Whether an op outcome is a `fail` because its connection was refused. */
export function isRefusal(outcome: { readonly type: string; readonly error?: string | undefined }): boolean {
  return outcome.type === 'fail' && outcome.error !== undefined && REFUSED.test(outcome.error);
}
