import { rmSync } from 'node:fs';
import { join } from 'node:path';

import { Job } from 'kubernetes-models/batch/v1/Job';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import {
  jobManifest,
  type JobOptions,
  K8S_CONTAINER,
  K8S_DEFAULT_CPU,
  K8S_DEFAULT_MEMORY,
  K8S_STORE_MOUNT,
} from '../../src/fleet/k8s.js';
import { buildPlan, type Plan, writePlan } from '../../src/fleet/plan.js';
import { WORKER_EXIT } from '../../src/fleet/worker.js';
import { baseConfig, planRequest, tempDir, usageError, writeStorePlan } from './_helpers/plan.js';

/** A DNS-1123 label: what Kubernetes accepts as a Job's name and its pods' hostnames. */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const MAX_NAME = 63;

const OPTIONS: JobOptions = { image: 'registry.example/mallory:1', parallelism: 3, storeClaim: 'fuzz-store' };

/** The manifest, typed as a Job (not validated). */
function asJob(manifest: Record<string, unknown>): Job {
  return new Job(manifest);
}

/** The manifest as the API server's schema reads it; `validate()` throws naming every mismatch. */
function validJob(manifest: Record<string, unknown>): Job {
  const job = asJob(manifest);
  job.validate();
  return job;
}

describe('jobManifest', () => {
  let store: string;
  let elsewhere: string;
  let plan: Plan;
  beforeEach(() => {
    store = tempDir();
    elsewhere = tempDir();
    // 2 arms × 4 seeds: 8 campaigns
    plan = writeStorePlan(store, { seeds: 4 });
  });
  afterEach(() => {
    rmSync(store, { recursive: true, force: true });
    rmSync(elsewhere, { recursive: true, force: true });
  });

  it('is a valid batch/v1 Job', () => {
    validJob(jobManifest(plan, { ...OPTIONS, namespace: 'fuzzing' }));
  });

  it('is checked for real: a Job the schema rejects does not pass', () => {
    const manifest = jobManifest(plan, OPTIONS);
    const spec = manifest.spec as Record<string, unknown>;

    expect(() => validJob({ ...manifest, spec: { ...spec, completions: 'x' } })).toThrow(
      'data/spec/completions must be integer',
    );
    const template = spec.template as { spec: { containers: Record<string, unknown>[] } };
    const broken = {
      ...template,
      spec: { ...template.spec, containers: [{ ...template.spec.containers[0], image: 7 }] },
    };
    expect(() => validJob({ ...manifest, spec: { ...spec, template: broken } })).toThrow(
      'data/spec/template/spec/containers/0/image must be string',
    );
  });

  it('runs one index per campaign, at most the parallelism (capped at the campaigns) at once', () => {
    const job = asJob(jobManifest(plan, OPTIONS));
    const capped = asJob(jobManifest(plan, { ...OPTIONS, parallelism: 50 }));

    expect(job.spec).toMatchObject({ completionMode: 'Indexed', completions: 8, parallelism: 3 });
    expect(capped.spec).toMatchObject({ completions: 8, parallelism: 8 });
  });

  it('runs `mallory run --plan` on the plan in the store volume, mounted from the claim', () => {
    const pod = asJob(jobManifest(plan, OPTIONS)).spec?.template.spec;
    const container = pod?.containers[0];

    expect(container).toMatchObject({
      name: K8S_CONTAINER,
      image: OPTIONS.image,
      command: ['mallory', 'run', '--plan', '/store/plans/test-plan/plan.json'],
    });
    expect(container?.volumeMounts).toContainEqual({ name: 'store', mountPath: K8S_STORE_MOUNT });
    expect(pod?.volumes).toContainEqual({
      name: 'store',
      persistentVolumeClaim: { claimName: 'fuzz-store' },
    });
    expect(pod?.restartPolicy).toBe('Never');
  });

  it('finds a plan written elsewhere in the store by its path there', () => {
    const inner = writePlan(
      buildPlan(planRequest(store, { id: 'p2' }), store),
      join(store, 'nightly', 'p.json'),
    );

    const container = asJob(jobManifest(inner, OPTIONS)).spec?.template.spec?.containers[0];

    expect(container?.command).toEqual(['mallory', 'run', '--plan', '/store/nightly/p.json']);
  });

  it('fails the whole Job when a worker exits with a usage error, and retries other failures per index', () => {
    const spec = asJob(jobManifest(plan, OPTIONS)).spec;

    expect(WORKER_EXIT.usage).toBe(2);
    expect(spec?.podFailurePolicy?.rules).toContainEqual({
      action: 'FailJob',
      onExitCodes: { containerName: K8S_CONTAINER, operator: 'In', values: [2] },
    });
    expect(spec?.backoffLimitPerIndex).toBeGreaterThan(0);
    expect(spec?.podReplacementPolicy).toBe('Failed');
  });

  it('names itself after the plan, lower-case and at most 63 characters, in the namespace given', () => {
    const long = writePlan(
      buildPlan(planRequest(store, { id: `Nightly_Run.${'x'.repeat(42)}.b-2` }), store),
      join(store, 'long.json'),
    );

    const named = asJob(jobManifest(long, { ...OPTIONS, namespace: 'fuzzing' }));
    const plain = asJob(jobManifest(plan, OPTIONS));

    expect(named.metadata?.name).toBe(`mallory-nightly-run-${'x'.repeat(42)}`);
    expect(named.metadata?.namespace).toBe('fuzzing');
    expect(plain.metadata).toMatchObject({ name: 'mallory-test-plan' });
    expect(plain.metadata).not.toHaveProperty('namespace');
    for (const job of [named, plain]) {
      const name = job.metadata?.name ?? '';
      expect(name.length).toBeLessThanOrEqual(MAX_NAME);
      expect(name).toMatch(DNS_LABEL);
      const labels = Object.values(job.metadata?.labels ?? {});
      expect(labels.every((v) => v.length <= MAX_NAME && DNS_LABEL.test(v))).toBe(true);
      expect(job.spec?.template.metadata?.labels).toEqual(job.metadata?.labels);
    }
  });

  it('refuses a plan outside its store: the workers would not find it on the volume', () => {
    const outside = writePlan(
      buildPlan(planRequest(store, { id: 'out' }), store),
      join(elsewhere, 'plan.json'),
    );

    const error = usageError(() => jobManifest(outside, OPTIONS));

    expect(error.code).toBe('bad-flag');
    expect(error.message).toContain(`the plan file ${outside.file} is outside its store ${store}`);
  });

  it.each([0, -1, 1.5])('refuses a parallelism of %d', (parallelism) => {
    const error = usageError(() => jobManifest(plan, { ...OPTIONS, parallelism }));

    expect(error.code).toBe('bad-flag');
    expect(error.message).toBe(`--parallelism needs a whole number ≥ 1, got ${parallelism}`);
  });
  it('requests CPU and memory for the campaign it runs: the defaults, or the flags given', () => {
    const plain = validJob(jobManifest(plan, OPTIONS)).spec?.template.spec?.containers[0];
    const sized = validJob(jobManifest(plan, { ...OPTIONS, cpu: '1500m', memory: '6Gi' })).spec?.template.spec
      ?.containers[0];

    expect(plain?.resources).toEqual({ requests: { cpu: K8S_DEFAULT_CPU, memory: K8S_DEFAULT_MEMORY } });
    expect(sized?.resources).toEqual({ requests: { cpu: '1500m', memory: '6Gi' } });
  });

  it.each([
    ['cpu', 'two', '--cpu needs a Kubernetes CPU quantity such as 2, 0.5 or 1500m, got "two"'],
    ['memory', '2GB', '--memory needs a Kubernetes quantity such as 2Gi or 512Mi, got "2GB"'],
  ])('refuses a --%s of %s', (flag, value, message) => {
    const error = usageError(() => jobManifest(plan, { ...OPTIONS, [flag]: value }));

    expect(error.code).toBe('bad-flag');
    expect(error.message).toBe(message);
  });

  /** The pod of a Job for a plan of `arms` on `network`, validated against the schema. */
  function podFor(network: string, arms: readonly string[], options: Partial<JobOptions> = {}) {
    const request = {
      ...planRequest(store, { id: `p-${network}`, arms }),
      base: baseConfig(store, { network }),
    };
    const written = writePlan(buildPlan(request, store), join(store, `${network}-${arms.join('-')}.json`));
    return validJob(jobManifest(written, { ...OPTIONS, ...options })).spec?.template.spec;
  }

  it.each([
    { network: 'proxy', arms: ['adaptive', 'random'], privileged: false, fuse: false },
    { network: 'proxy', arms: ['adaptive', 'adaptive+disk'], privileged: true, fuse: true },
    { network: 'netns', arms: ['adaptive', 'random'], privileged: true, fuse: false },
    { network: 'auto', arms: ['adaptive', 'random'], privileged: true, fuse: false },
  ])(
    'is privileged and mounts /dev/fuse only when the plan needs them: $network with $arms',
    ({ network, arms, privileged, fuse }) => {
      const pod = podFor(network, arms);
      const container = pod?.containers[0];

      expect(container?.securityContext?.privileged === true).toBe(privileged);
      expect(container?.volumeMounts?.some((m) => m.mountPath === '/dev/fuse')).toBe(fuse);
      expect(pod?.volumes?.some((v) => v.hostPath?.path === '/dev/fuse')).toBe(fuse);
    },
  );

  it('runs unprivileged on auto for a system that does not use namespaces there', () => {
    const container = podFor('auto', ['adaptive'], { autoUsesNetns: false })?.containers[0];

    expect(container?.securityContext).toBeUndefined();
    expect(container?.volumeMounts).toEqual([{ name: 'store', mountPath: K8S_STORE_MOUNT }]);
  });
});
