/**
 * Role changes read from event text: a node's role (leader, follower, candidate) is what the
 * `causal` abstraction labels events with instead of node ids. Log lines get `attrs.role` from
 * {@link roleOfText} in `log-events.ts`; probe events name roles in their type
 * (`become-leader`, `become-follower`, …) or carry `attrs.role`.
 */

export type Role = 'leader' | 'follower' | 'candidate';

const VERB = String.raw`(?:became|becoming|become|becomes|elected|elected as|won election,? now|convert(?:ed|ing)?\s*to|transition(?:ed|ing)?\s*to|state changed to|switch(?:ed|ing)?\s*to|step(?:ped|ping)?\s*down\s*to|now|is now|entering|enter)`;

const PATTERNS: readonly (readonly [Role, RegExp])[] = [
  ['candidate', new RegExp(String.raw`\b${VERB}\s+(?:a\s+|the\s+)?(?:pre-?)?candidate\b`, 'i')],
  [
    'leader',
    new RegExp(String.raw`\b${VERB}\s+(?:a\s+|the\s+|new\s+)?(?:raft\s+)?(?:leader|master|primary)\b`, 'i'),
  ],
  [
    'follower',
    new RegExp(String.raw`\b${VERB}\s+(?:a\s+|the\s+)?(?:follower|replica|slave|secondary)\b`, 'i'),
  ],
  ['leader', /\b(?:convertToLeader|becomeLeader|become-leader|leader elected|won the election)\b/i],
  [
    'follower',
    /\b(?:convertToFollower|becomeFollower|become-follower|step-down|stepping down|stepped down)\b/i,
  ],
  [
    'candidate',
    /\b(?:convertToCandidate|becomeCandidate|become-candidate|starting election|start(?:ing|s)? (?:a )?(?:new )?election)\b/i,
  ],
];

/** The role a line of text announces, if any (`"7e3 became leader at term 3"` → `leader`). */
export function roleOfText(text: string): Role | undefined {
  for (const [role, re] of PATTERNS) if (re.test(text)) return role;
  return undefined;
}

const ROLES: readonly string[] = ['leader', 'follower', 'candidate'];

/** A role from an attribute value (`leader`, `Leader`, `StateLeader`, …). */
export function roleOfValue(value: string | number | undefined): Role | undefined {
  if (typeof value !== 'string') return undefined;
  const v = value.toLowerCase().replace(/^state/, '');
  return ROLES.includes(v) ? (v as Role) : undefined;
}
