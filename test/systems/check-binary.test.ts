import { describe, expect, it } from 'vitest';

import { checkBinary } from '../../src/systems/check-binary.js';

describe('checkBinary', () => {
  it('with all four arguments: what, the first line printed, or the Debian package to install', async () => {
    const found = await checkBinary('node', ['--version'], 'nodejs', 'Node.js');
    expect(found).toEqual({ ok: true, what: `Node.js: ${process.version}` });
    const missing = await checkBinary('mallory-no-such-binary', ['--version'], 'some-package', 'the server');
    expect(missing).toEqual({
      ok: false,
      what: 'the server: `mallory-no-such-binary` not found',
      fix: 'apt-get install -y some-package',
    });
  });

  it('called with two (as a plain JavaScript adapter may): named by its command, never "undefined"', async () => {
    const found = await checkBinary('node', ['--version']);
    expect(found).toEqual({ ok: true, what: `node: ${process.version}` });
    const missing = await checkBinary('mallory-no-such-binary', ['--version']);
    expect(missing).toEqual({
      ok: false,
      what: 'mallory-no-such-binary: `mallory-no-such-binary` not found',
      fix: 'install `mallory-no-such-binary` or put it on PATH',
    });
    expect(JSON.stringify([found, missing])).not.toContain('undefined');
  });
});
