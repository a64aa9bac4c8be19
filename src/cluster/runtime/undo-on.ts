import type { RemoteTarget, Resource } from '../resources.js';
import { type DockerEndpoint, dockerArgv } from './docker-command.js';

/**
 * Where a runtime's commands run, as data the run's registry can keep: this machine, a host over
 * SSH (reached again by `mallory cleanup`), or a container through the docker client.
 */
export type RuntimePlace =
  | { readonly kind: 'local' }
  | { readonly kind: 'ssh'; readonly target: RemoteTarget }
  | { readonly kind: 'docker'; readonly endpoint: DockerEndpoint; readonly container: string };

/** `docker exec` of shell text as root in the container, its argv (after the client's flags). */
export function containerExecArgv(container: string, script: string, interactive = false): string[] {
  return ['exec', ...(interactive ? ['-i'] : []), '-u', '0', container, 'sh', '-c', script];
}

/**
 * The registry's record of something made where a runtime runs, undone by running the shell text
 * `undo` there as root (on this machine by `sh -c`, over SSH on a host, by `docker exec` in a
 * container): one record for every place, so what makes it is written once.
 */
export function undoOn(place: RuntimePlace, undo: string, label: string): Resource {
  switch (place.kind) {
    case 'local':
      return { kind: 'command', undo: ['/bin/sh', '-c', undo], label };
    case 'ssh':
      return { kind: 'remote', target: place.target, undo, label };
    case 'docker':
      return {
        kind: 'command',
        undo: dockerArgv(place.endpoint, containerExecArgv(place.container, undo)),
        label,
      };
  }
}
