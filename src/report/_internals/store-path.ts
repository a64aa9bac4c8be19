import { realpath, stat } from 'node:fs/promises';
import { join, sep } from 'node:path';

/** What a request's path names inside the store, or why it names nothing that may be served. */
export type StorePath =
  | { readonly kind: 'file'; readonly path: string; readonly size: number }
  | { readonly kind: 'dir'; readonly path: string; readonly segments: readonly string[] }
  | { readonly kind: 'refused'; readonly status: 400 | 403 | 404; readonly reason: string };

const HTTP_BAD_REQUEST = 400;
const HTTP_FORBIDDEN = 403;
const HTTP_NOT_FOUND = 404;

/** Characters a path segment may not hold once decoded: a separator or a NUL would name another path. */
const UNSAFE_SEGMENT = /[/\\\0]/;

/**
 * The file or directory a request's raw path (`/kvraft/2026…/report.html`, percent-encoded as sent)
 * names under the store whose real path is `rootReal`. Every segment is decoded on its own and
 * refused if it is `.` or `..` or decodes to a separator (an encoded slash), so no spelling of a
 * path climbs out; the result's real path (links followed) must still lie inside the store, so a
 * symbolic link that points out of it is refused too. Only directories and regular files are
 * served (no FIFO, device or socket).
 */
export async function resolveStorePath(rootReal: string, rawPath: string): Promise<StorePath> {
  if (!rawPath.startsWith('/')) return { kind: 'refused', status: HTTP_BAD_REQUEST, reason: 'not a path' };
  const segments: string[] = [];
  for (const raw of rawPath.split('/')) {
    if (raw === '') continue;
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      return { kind: 'refused', status: HTTP_BAD_REQUEST, reason: 'a badly encoded path' };
    }
    if (segment === '.' || segment === '..' || UNSAFE_SEGMENT.test(segment))
      return {
        kind: 'refused',
        status: HTTP_BAD_REQUEST,
        reason: 'a path must name a file inside the store',
      };
    segments.push(segment);
  }
  let real: string;
  try {
    real = await realpath(join(rootReal, ...segments));
  } catch {
    return { kind: 'refused', status: HTTP_NOT_FOUND, reason: 'no such file in the store' };
  }
  if (real !== rootReal && !real.startsWith(rootReal + sep))
    return { kind: 'refused', status: HTTP_FORBIDDEN, reason: 'a link out of the store' };
  const info = await stat(real).catch(() => undefined);
  if (info === undefined)
    return { kind: 'refused', status: HTTP_NOT_FOUND, reason: 'no such file in the store' };
  if (info.isDirectory()) return { kind: 'dir', path: real, segments };
  if (info.isFile()) return { kind: 'file', path: real, size: info.size };
  return { kind: 'refused', status: HTTP_FORBIDDEN, reason: 'not a regular file' };
}
