import { describe, expect, it } from 'vitest';

import { configFromFlags } from '../../src/cli/run.js';

const BASE = {
  system: 'etcd',
  time: '60s',
  policy: 'adaptive',
  faults: 'partition,kill,pause',
  workload: 'register',
  bug: [],
  store: 'store',
  network: 'auto',
};

describe('--hosts docker:IMAGE', () => {
  it('names the image of the containers, not SSH hosts, with the daemon of --docker-host', () => {
    const config = configFromFlags({
      ...BASE,
      hosts: 'docker:registry.local:5000/etcd:3.4',
      dockerHost: 'unix:///run/d.sock',
    });
    expect(config.containers).toEqual({ image: 'registry.local:5000/etcd:3.4' });
    expect(config.dockerHost).toBe('unix:///run/d.sock');
    expect(config.hosts).toBeUndefined();
  });

  it('leaves SSH hosts as they were', () => {
    const config = configFromFlags({ ...BASE, hosts: 'h1,h2,h3' });
    expect(config.containers).toBeUndefined();
    expect(config.hosts?.map((h) => h.host)).toEqual(['h1', 'h2', 'h3']);
  });

  it('refuses a missing or listed image in one line', () => {
    expect(() => configFromFlags({ ...BASE, hosts: 'docker:' })).toThrow(
      /^--hosts docker:: not an image: write docker:IMAGE/,
    );
    expect(() => configFromFlags({ ...BASE, hosts: 'docker:a,b' })).toThrow(/not an image/);
  });
});
