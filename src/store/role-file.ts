import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A node's roles as its adapter's events gave them: `<runDir>/nodes/<node>/roles.jsonl`. */
export const ROLES_FILE = 'roles.jsonl';

/** A line of it: the role, when (ms since the run started), and the event that said it. */
export interface RoleLine {
  readonly atMs: number;
  readonly role: 'leader' | 'follower' | 'candidate';
  readonly event: string;
}

const ROLES: readonly string[] = ['leader', 'follower', 'candidate'];

export function appendRole(runDir: string, node: string, line: RoleLine): void {
  appendFileSync(join(runDir, 'nodes', node, ROLES_FILE), JSON.stringify(line) + '\n');
}

/** A node's recorded roles, in order; undefined when its adapter's events gave none. */
export function readRoles(runDir: string, node: string): RoleLine[] | undefined {
  let text: string;
  try {
    text = readFileSync(join(runDir, 'nodes', node, ROLES_FILE), 'utf8');
  } catch {
    return undefined;
  }
  const lines: RoleLine[] = [];
  for (const raw of text.split('\n')) {
    if (raw.trim() === '') continue;
    try {
      const json = JSON.parse(raw) as Partial<RoleLine>;
      if (typeof json.atMs === 'number' && typeof json.role === 'string' && ROLES.includes(json.role)) {
        lines.push({ atMs: json.atMs, role: json.role, event: typeof json.event === 'string' ? json.event : '' });
      }
    } catch {
      // a line cut short by a crash
    }
  }
  return lines.length > 0 ? lines : undefined;
}
