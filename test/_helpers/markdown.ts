/** One fenced code block of a Markdown text: its info string (after the backticks) and its body. */
export interface FencedBlock {
  readonly info: string;
  readonly body: string;
}

const FENCE = /^(`{3,})(.*)$/;

/** Every fenced code block of `text`, in order (a block's body ends with its last line's newline). */
export function fencedBlocks(text: string): FencedBlock[] {
  const blocks: FencedBlock[] = [];
  let open: { fence: string; info: string; lines: string[] } | undefined;
  for (const line of text.split('\n')) {
    const m = FENCE.exec(line.trimStart());
    if (open === undefined) {
      if (m) open = { fence: m[1], info: m[2].trim(), lines: [] };
    } else if (m && m[1].length >= open.fence.length && m[2].trim() === '') {
      blocks.push({ info: open.info, body: open.lines.map((l) => `${l}\n`).join('') });
      open = undefined;
    } else {
      open.lines.push(line);
    }
  }
  return blocks;
}

/** `text` without its fenced blocks and inline code spans, where a link is only an example. */
function prose(text: string): string {
  const out: string[] = [];
  let fence: string | undefined;
  for (const line of text.split('\n')) {
    const m = FENCE.exec(line.trimStart());
    if (fence === undefined && m) fence = m[1];
    else if (fence !== undefined && m && m[1].length >= fence.length && m[2].trim() === '') fence = undefined;
    else if (fence === undefined) out.push(line);
  }
  return out.join('\n').replace(/`[^`\n]*`/g, '');
}

/**
 * The targets of the relative links of a Markdown text — inline links `[text](target)` and
 * reference definitions `[name]: target` — without their `#anchor`; links to a URL scheme
 * (`https:`, `mailto:`) and links to an anchor of the same page are left out.
 */
export function relativeLinks(text: string): string[] {
  const body = prose(text);
  const targets = [
    ...[...body.matchAll(/\]\(\s*(?:<([^>]+)>|([^)\s]+))(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] ?? m[2]),
    ...[...body.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/gm)].map((m) => m[1]),
  ];
  return targets
    .filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t) && !t.startsWith('#'))
    .map((t) => decodeURIComponent(t.replace(/#.*$/, '')));
}
