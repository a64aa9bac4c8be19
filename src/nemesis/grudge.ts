import type { Link } from '../cluster/net/backend.js';

/** The fault families that act on links: a partition cuts them, a packet fault degrades them. */
export type LinkFault = 'cut' | 'packet';

/** The fault on links a fault's name (`f`) enacts: packet faults are `start-packet`; the rest cut. */
export function linkFaultOf(f: string): LinkFault {
  return f === 'start-packet' ? 'packet' : 'cut';
}

/**
 * What a fault on links did, as a person reads it (Jepsen's grudge): the sides of a partition
 * (`n1 | n2,n3`) when its cut links split the nodes into groups cut both ways from each other; a
 * bridge (`n1 | n3, bridged by n2`) when such a split leaves out `members` no link touches; the
 * links one node sends or receives on (`from n3 to n1,n2`), else every link (`n1→n2, n2→n3`).
 * A packet fault (`what` 'packet') degrades links rather than cutting them, so its groups read
 * `between n1 and n2,n3` (`between n1 and n3, not through n2` with a bridge), never as sides.
 * Undefined when there are no links.
 */
export function describeLinks(
  nodes: readonly string[],
  links: readonly Link[] | undefined,
  members: readonly string[] = [],
  what: LinkFault = 'cut',
): string | undefined {
  const text = describeCut(nodes, links, members);
  if (text === undefined || what === 'cut') return text;
  const bridge = /^(.*), bridged by (\S+)$/.exec(text);
  const groups = (bridge?.[1] ?? text).split(' | ');
  if (groups.length < 2) return text;
  const between = `between ${groups.slice(0, -1).join(', ')} and ${groups[groups.length - 1]}`;
  return bridge ? `${between}, not through ${bridge[2]}` : between;
}

function describeCut(
  nodes: readonly string[],
  links: readonly Link[] | undefined,
  members: readonly string[],
): string | undefined {
  if (links === undefined || links.length === 0) return undefined;
  const touched = new Set(links.flat());
  const all = [...new Set([...nodes, ...touched])].sort();
  // A bridge: members no link touches, in touch with both sides of a clean split of the rest.
  const bridges = [...new Set(members)].filter((n) => !touched.has(n)).sort();
  const bridged = bridges.length > 0 ? splitSides([...touched].sort(), links) : undefined;
  if (bridged !== undefined) return `${bridged}, bridged by ${bridges.join(',')}`;
  const sides = splitSides(all, links);
  if (sides !== undefined) return sides;
  const from = new Set(links.map(([a]) => a));
  const to = new Set(links.map(([, b]) => b));
  if (from.size === 1) return `from ${[...from][0]} to ${[...to].sort().join(',')}`;
  if (to.size === 1) return `to ${[...to][0]} from ${[...from].sort().join(',')}`;
  return links.map(([a, b]) => `${a}→${b}`).join(', ');
}

/** `n1,n3 | n2` when `links` cut `nodes` into sides, every link between them both ways; else undefined. */
function splitSides(nodes: readonly string[], links: readonly Link[]): string | undefined {
  const cut = new Set(links.map(([a, b]) => `${a}>${b}`));
  const sides = components(nodes, (a, b) => !cut.has(`${a}>${b}`) && !cut.has(`${b}>${a}`));
  const split =
    sides.length > 1 &&
    links.length === crossPairs(sides) * 2 &&
    sides.every((side, i) =>
      sides.every((other, j) => i === j || side.every((a) => other.every((b) => cut.has(`${a}>${b}`)))),
    );
  return split ? sides.map((s) => s.join(',')).join(' | ') : undefined;
}

/** The nodes grouped by `joined` (transitively), each group sorted, groups by their first node. */
function components(nodes: readonly string[], joined: (a: string, b: string) => boolean): string[][] {
  const seen = new Set<string>();
  const groups: string[][] = [];
  for (const start of nodes) {
    if (seen.has(start)) continue;
    const group = [start];
    seen.add(start);
    for (let i = 0; i < group.length; i++) {
      for (const n of nodes) {
        if (!seen.has(n) && joined(group[i], n)) {
          seen.add(n);
          group.push(n);
        }
      }
    }
    groups.push(group.sort());
  }
  return groups.sort((a, b) => a[0].localeCompare(b[0]));
}

/** How many unordered pairs of nodes lie across different groups. */
function crossPairs(groups: readonly (readonly string[])[]): number {
  let pairs = 0;
  for (let i = 0; i < groups.length; i++) {
    for (let j = i + 1; j < groups.length; j++) pairs += groups[i].length * groups[j].length;
  }
  return pairs;
}
