/** Where a run's life stands, as its run row records it. */
export type RunStatus = 'running' | 'complete' | 'incomplete' | 'interrupted' | 'error';
