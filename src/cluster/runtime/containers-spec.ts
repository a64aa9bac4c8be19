import { UsageError } from '../../core/errors.js';

const PREFIX = 'docker:';

/** Whether `--hosts` names containers (`docker:IMAGE`) rather than SSH hosts. */
export function isContainerHosts(spec: string): boolean {
  return spec.startsWith(PREFIX);
}

/** `--hosts docker:IMAGE`: the nodes in containers of IMAGE (a name, name:tag or an image id). */
export function parseContainerHosts(spec: string): { image: string } {
  const image = spec.slice(PREFIX.length).trim();
  if (image === '' || /\s|,/.test(image)) {
    throw new UsageError(
      'bad-flag',
      `--hosts ${spec}: not an image: write docker:IMAGE (e.g. docker:mallory-etcd:1), one image for every node`,
    );
  }
  return { image };
}
