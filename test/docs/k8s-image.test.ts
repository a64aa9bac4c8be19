import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

/** The Debian packages `.ci/run` installs: the words of its `apt-get install` command. */
function ciPackages(): Set<string> {
  const script = read('.ci/run');
  const start = script.indexOf('apt-get install');
  const lines: string[] = [];
  for (const line of script.slice(start).split('\n')) {
    lines.push(line);
    if (!line.trimEnd().endsWith('\\')) break;
  }
  const words = lines
    .join(' ')
    .replace(/\\/g, ' ')
    .split(/\s+/)
    .filter((w) => /^[a-z0-9][a-z0-9.+-]+$/.test(w));
  return new Set(words.filter((w) => !['apt-get', 'install'].includes(w)));
}

/** Every `PACKAGES="…"` list in a text (the Dockerfile's default, the page's examples). */
function packageLists(text: string): string[][] {
  return [...text.matchAll(/PACKAGES="([^"]+)"/g)].map((m) => m[1].trim().split(/\s+/));
}

describe('the Kubernetes worker image recipe', () => {
  const dockerfile = read('examples/k8s/Dockerfile');
  const page = read('docs/fleet.md');

  it('installs, and the docs name, only packages that the CI installs too', () => {
    const ci = ciPackages();
    expect(ci).toContain('etcd-server');
    expect(ci).toContain('libfuse3-dev');
    const lists = [...packageLists(dockerfile), ...packageLists(page)];
    expect(lists.length).toBeGreaterThanOrEqual(3);
    const unknown = lists.flat().filter((p) => !ci.has(p));
    expect(unknown).toEqual([]);
  });

  it("states the Dockerfile's default package set in the docs as it is", () => {
    const [defaults] = packageLists(dockerfile);
    expect(packageLists(page)).toContainEqual(defaults);
  });

  it('builds on Debian trixie from the checkout, with mallory on the PATH', () => {
    expect(dockerfile).toMatch(/^FROM debian:trixie-slim$/m);
    expect(dockerfile).toContain('npm ci');
    expect(dockerfile).toContain('npm install -g .');
    expect(page).toContain('docker build -f examples/k8s/Dockerfile');
  });
});
