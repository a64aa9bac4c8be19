import { relative } from 'node:path';

import { UsageError } from '../core/errors.js';
import type { Plan } from './plan.js';
import { WORKER_EXIT } from './worker.js';

/** Where the store volume is mounted in every worker's container. */
export const K8S_STORE_MOUNT = '/store';
/** The worker container's name (the pod failure policy names it). */
export const K8S_CONTAINER = 'worker';
/** Retries of one index before Kubernetes gives it up (a pod evicted, a node lost). */
export const K8S_BACKOFF_PER_INDEX = 3;
/**
 * What one worker's pod requests by default: a campaign runs its nodes (3 for most systems) and
 * the fuzzer in one pod, about half a core and a few hundred MiB each when busy.
 */
export const K8S_DEFAULT_CPU = '2';
export const K8S_DEFAULT_MEMORY = '2Gi';
/** A Kubernetes CPU quantity (`2`, `0.5`, `1500m`) and a memory one (`2Gi`, `512Mi`, `1G`). */
const CPU_QUANTITY = /^(\d+(\.\d+)?|\d+m)$/;
const MEMORY_QUANTITY = /^\d+(\.\d+)?(Ki|Mi|Gi|Ti|k|M|G|T)?$/;

export interface JobOptions {
  /** An image with `mallory` on its PATH and the system under test's binaries installed. */
  readonly image: string;
  /** Workers at once. */
  readonly parallelism: number;
  /** The PersistentVolumeClaim that holds the store (ReadWriteMany when workers span nodes). */
  readonly storeClaim: string;
  readonly namespace?: string;
  /** The container's CPU request (default `K8S_DEFAULT_CPU`). */
  readonly cpu?: string;
  /** The container's memory request (default `K8S_DEFAULT_MEMORY`). */
  readonly memory?: string;
  /**
   * Whether the system runs in network namespaces under `network: auto` (it declares its ports, and
   * a pod's worker is root). Default true: a plan that cannot tell asks for the privilege.
   */
  readonly autoUsesNetns?: boolean;
}

/** What the plan's campaigns need of the pod: namespaces and iptables, the FUSE disk layer. */
export function podNeeds(
  plan: Plan,
  autoUsesNetns = true,
): { readonly netns: boolean; readonly fuse: boolean } {
  let netns = false;
  let fuse = false;
  for (const { config } of plan.campaigns) {
    const network = config.network ?? 'auto';
    if (network === 'netns' || (network === 'auto' && autoUsesNetns)) netns = true;
    if (Array.isArray(config.faults) && config.faults.includes('disk')) fuse = true;
  }
  return { netns, fuse };
}

/** A Kubernetes object name: lower-case letters, digits and `-`, at most 63 characters. */
function objectName(id: string): string {
  const name = `mallory-${id.toLowerCase().replace(/[^a-z0-9-]+/g, '-')}`.slice(0, 63).replace(/-+$/, '');
  return name;
}

/** Refuses a CPU or memory request Kubernetes would not read (before anything is written). */
export function checkRequests(cpu: string, memory: string): void {
  if (!CPU_QUANTITY.test(cpu)) {
    throw new UsageError(
      'bad-flag',
      `--cpu needs a Kubernetes CPU quantity such as 2, 0.5 or 1500m, got "${cpu}"`,
    );
  }
  if (!MEMORY_QUANTITY.test(memory)) {
    throw new UsageError(
      'bad-flag',
      `--memory needs a Kubernetes quantity such as 2Gi or 512Mi, got "${memory}"`,
    );
  }
}

/**
 * The Indexed Job that runs every campaign of the plan: completion index N runs campaign N
 * (`JOB_COMPLETION_INDEX`, which `mallory run --plan` reads). The plan file must sit inside the
 * store (where `mallory plan` writes it by default), so one volume carries the plan, the runs and
 * the workers' records. A usage error (exit 2: a bad plan, an unknown system) fails the Job at
 * once; an infrastructure failure (exit 3) and a lost pod are retried, per index.
 */
export function jobManifest(plan: Plan, options: JobOptions): Record<string, unknown> {
  const inStore = relative(plan.storeDir, plan.file);
  if (inStore.startsWith('..')) {
    throw new UsageError(
      'bad-flag',
      `--k8s: the plan file ${plan.file} is outside its store ${plan.storeDir}: write the plan into the store (the default --out) so the workers find it on the store's volume`,
    );
  }
  if (!Number.isInteger(options.parallelism) || options.parallelism < 1) {
    throw new UsageError('bad-flag', `--parallelism needs a whole number ≥ 1, got ${options.parallelism}`);
  }
  const cpu = options.cpu ?? K8S_DEFAULT_CPU;
  const memory = options.memory ?? K8S_DEFAULT_MEMORY;
  checkRequests(cpu, memory);
  const needs = podNeeds(plan, options.autoUsesNetns);
  const privileged = needs.netns || needs.fuse;
  const labels = { 'app.kubernetes.io/name': 'mallory', 'mallory.dev/plan': objectName(plan.id).slice(8) };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: objectName(plan.id),
      ...(options.namespace !== undefined ? { namespace: options.namespace } : {}),
      labels,
    },
    spec: {
      completionMode: 'Indexed',
      completions: plan.campaigns.length,
      parallelism: Math.min(options.parallelism, plan.campaigns.length),
      backoffLimitPerIndex: K8S_BACKOFF_PER_INDEX,
      // A retry starts once the failed pod is gone, so two workers never hold one index.
      podReplacementPolicy: 'Failed',
      podFailurePolicy: {
        rules: [
          {
            action: 'FailJob',
            onExitCodes: { containerName: K8S_CONTAINER, operator: 'In', values: [WORKER_EXIT.usage] },
          },
          { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] },
        ],
      },
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: 'Never',
          containers: [
            {
              name: K8S_CONTAINER,
              image: options.image,
              command: ['mallory', 'run', '--plan', `${K8S_STORE_MOUNT}/${inStore}`],
              resources: { requests: { cpu, memory } },
              // Only what the plan needs: network namespaces and iptables, or the FUSE disk layer.
              ...(privileged ? { securityContext: { privileged: true } } : {}),
              volumeMounts: [
                { name: 'store', mountPath: K8S_STORE_MOUNT },
                ...(needs.fuse ? [{ name: 'fuse', mountPath: '/dev/fuse' }] : []),
              ],
            },
          ],
          volumes: [
            { name: 'store', persistentVolumeClaim: { claimName: options.storeClaim } },
            ...(needs.fuse ? [{ name: 'fuse', hostPath: { path: '/dev/fuse', type: 'CharDevice' } }] : []),
          ],
        },
      },
    },
  };
}
