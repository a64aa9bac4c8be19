import { type ChildProcess, spawn } from 'node:child_process';
import { createReadStream } from 'node:fs';

/** Which docker client, talking to which daemon (`-H`; absent: the client's own default, `DOCKER_HOST`). */
export interface DockerEndpoint {
  /** The docker client (e.g. `/usr/bin/docker` of Debian's docker.io). */
  readonly binary: string;
  /** The daemon's address (`unix:///run/docker.sock`, `tcp://…`), as `--docker-host` or `DOCKER_HOST` gave it. */
  readonly host?: string | undefined;
}

/** A docker command line: the client, the daemon, the arguments. */
export function dockerArgv(endpoint: DockerEndpoint, args: readonly string[]): string[] {
  return [endpoint.binary, ...(endpoint.host !== undefined ? ['-H', endpoint.host] : []), ...args];
}

export interface DockerResult {
  readonly code: number;
  readonly stdout: Buffer;
  readonly stderr: string;
}

/** How long a docker command may take before it is killed. */
export const EXEC_TIMEOUT_MS = 30_000;

/** Runs a docker command to completion (stdout as bytes); never rejects for a non-zero exit. */
export function docker(
  endpoint: DockerEndpoint,
  args: readonly string[],
  options: {
    readonly input?: string | Buffer;
    readonly inputFile?: string;
    readonly timeoutMs?: number;
  } = {},
): Promise<DockerResult> {
  const argv = dockerArgv(endpoint, args);
  return new Promise((resolve) => {
    let child: ChildProcess;
    try {
      // Its own process group: a Ctrl-C at the terminal reaches the fuzzer, which ends the run in
      // order, not the docker clients it is still using for that.
      child = spawn(argv[0], argv.slice(1), { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    } catch (error) {
      resolve({ code: 127, stdout: Buffer.alloc(0), stderr: (error as Error).message });
      return;
    }
    const out: Buffer[] = [];
    let stderr = '';
    const timer = setTimeout(() => {
      stderr += `timed out after ${options.timeoutMs ?? EXEC_TIMEOUT_MS} ms`;
      child.kill('SIGKILL');
    }, options.timeoutMs ?? EXEC_TIMEOUT_MS);
    child.stdout?.on('data', (d: Buffer) => out.push(d));
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdin?.on('error', () => {
      // the command ended without reading all its input: its exit says why
    });
    child.once('error', (error) => {
      stderr += error.message;
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 1, stdout: Buffer.concat(out), stderr });
    });
    if (options.inputFile !== undefined && child.stdin) {
      createReadStream(options.inputFile)
        .on('error', (error) => {
          stderr += error.message;
          child.stdin?.end();
        })
        .pipe(child.stdin);
    } else child.stdin?.end(options.input ?? '');
  });
}
