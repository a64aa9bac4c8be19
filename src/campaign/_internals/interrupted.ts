/** Thrown by a phase that stopped because the run was aborted: the run ends `interrupted`. */
export class Interrupted extends Error {}
