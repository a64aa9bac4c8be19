/**
 * Online log-template mining in the style of Drain (He et al., ICWS 2017): a line is masked
 * (numbers, hex ids, IPs and addresses, UUIDs, paths become `<*>`), split into tokens, routed down a
 * fixed-depth tree (token count, then the first `depth − 2` tokens) to a leaf holding a few
 * templates, and matched to the most similar one; if none reaches `similarity`, it starts a new
 * template. A matched template generalises: tokens that differ become `<*>`.
 *
 * The template id is the event type. Ids are `L1`, `L2`, … in order of first appearance, stable
 * within a run (a template keeps its id when it generalises). One `Drain` per run, shared by all
 * nodes, so the same log statement on two nodes has one type.
 *
 * One departure from Drain: two lines whose tokens differ in *constant text* (a token with no
 * digit and no masked part, e.g. `MsgVoteResp` vs `MsgAppResp`, `accepted` vs `rejected`,
 * `role=leader` vs `role=follower`) are kept apart even when they are similar enough, because such
 * words usually name what happened. Variables that survive masking are words too sometimes (a
 * user's key): once a leaf holds `wordSplitLimit` templates, it falls back to plain Drain.
 *
 * Usage: `const drain = new Drain(); const {id} = drain.add('became leader at term 3');`
 */

export const WILDCARD = '<*>';

export interface DrainOptions {
  /** Tree depth including the root and length levels (Drain's default 4: two token levels). */
  readonly depth?: number;
  /** Minimum share of equal tokens for a line to join a template (Drain3 default 0.4). */
  readonly similarity?: number;
  /** Children per inner node before new tokens share a `<*>` branch. */
  readonly maxChildren?: number;
  /** Lines longer than this many tokens are cut (keeps the work per line bounded). */
  readonly maxTokens?: number;
  /** Templates kept; lines that would found more get the type `L0` (memory stays bounded). */
  readonly maxTemplates?: number;
  /** Templates per leaf while differing constant words keep lines apart (0: plain Drain). */
  readonly wordSplitLimit?: number;
}

export interface LogTemplate {
  readonly id: string;
  /** Tokens of the template, `<*>` where lines differ. */
  readonly tokens: readonly string[];
  /** Lines matched so far. */
  readonly size: number;
}

const DEFAULT_DEPTH = 4;
const DEFAULT_SIMILARITY = 0.4;
const DEFAULT_MAX_CHILDREN = 100;
const DEFAULT_MAX_TOKENS = 64;
const DEFAULT_MAX_TEMPLATES = 10_000;
const DEFAULT_WORD_SPLIT_LIMIT = 8;
/** The template of lines mined once `maxTemplates` is reached. */
export const OVERFLOW_TEMPLATE_ID = 'L0';
/** Exact masked-line cache; cleared when full so memory stays bounded. */
const LINE_CACHE_MAX = 4096;

// Order matters: the most specific shapes first, plain numbers last.
const MASKS: readonly RegExp[] = [
  /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, // UUID
  /\b(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?\b/g, // IPv4[:port]
  /\[[0-9a-f:]*:[0-9a-f:]*\](?::\d{1,5})?/gi, // [IPv6]:port
  /\b[a-z][a-z0-9+.-]*:\/\/[^\s"',)]+/gi, // URLs
  /(?<![\w/])(?:\/[\w.@+-]+){2,}\/?/g, // absolute paths
  /\b[\w-]+(?:\.[\w-]+)*:\d{2,5}\b/g, // host:port
  /\b0x[0-9a-f]+\b/gi, // 0x hex
  /\b(?:(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{6,}|[a-f]{8,})\b/gi, // hex ids (a digit and a letter, or 8+ letters)
  /(?:(?<=^|[\s=:([,])[-+])?(?<![A-Za-z0-9_.])\d+(?:\.\d+)?(?:e[-+]?\d+)?(?:[a-zµ]{1,3})?\b/gi, // numbers with units
];

function mask(line: string): string {
  let out = line;
  for (const re of MASKS) out = out.replace(re, WILDCARD);
  return out;
}

/** Tokens with digits or masked parts do not get their own branch in the tree (Drain's rule). */
function isVariable(token: string): boolean {
  return /\d/.test(token) || token.includes(WILDCARD);
}

interface Cluster {
  readonly id: string;
  tokens: string[];
  size: number;
}

interface TreeNode {
  readonly children: Map<string, TreeNode>;
  readonly clusters: Cluster[];
}

function newNode(): TreeNode {
  return { children: new Map(), clusters: [] };
}

export class Drain {
  private readonly depth: number;
  private readonly similarity: number;
  private readonly maxChildren: number;
  private readonly maxTokens: number;
  private readonly maxTemplates: number;
  private readonly wordSplitLimit: number;
  private readonly overflow: Cluster = { id: OVERFLOW_TEMPLATE_ID, tokens: [WILDCARD], size: 0 };
  private readonly root = newNode();
  private readonly clusters: Cluster[] = [];
  private readonly cache = new Map<string, Cluster>();

  constructor(options: DrainOptions = {}) {
    this.depth = options.depth ?? DEFAULT_DEPTH;
    this.similarity = options.similarity ?? DEFAULT_SIMILARITY;
    this.maxChildren = options.maxChildren ?? DEFAULT_MAX_CHILDREN;
    this.maxTokens = options.maxTokens ?? DEFAULT_MAX_TOKENS;
    this.maxTemplates = options.maxTemplates ?? DEFAULT_MAX_TEMPLATES;
    this.wordSplitLimit = options.wordSplitLimit ?? DEFAULT_WORD_SPLIT_LIMIT;
    if (!Number.isInteger(this.depth) || this.depth < 3) {
      throw new RangeError(`Drain depth should be an integer ≥ 3, got ${this.depth}`);
    }
    if (!(this.similarity >= 0 && this.similarity <= 1)) {
      throw new RangeError(`Drain similarity should be in [0, 1], got ${this.similarity}`);
    }
  }

  /** Mines one line (already stripped of timestamps and levels); returns its template. */
  add(line: string): LogTemplate {
    const masked = mask(line.trim());
    const cached = this.cache.get(masked);
    if (cached) {
      cached.size++;
      return cached;
    }
    let tokens = masked.split(/\s+/).filter((t) => t.length > 0);
    if (tokens.length > this.maxTokens) tokens = tokens.slice(0, this.maxTokens);
    const leaf = this.leafFor(tokens);
    let best: Cluster | undefined;
    let bestSim = -1;
    let bestParams = -1;
    const splitWords = leaf.clusters.length < this.wordSplitLimit;
    for (const c of leaf.clusters) {
      const [sim, params] = this.compare(c.tokens, tokens, splitWords);
      if (sim > bestSim || (sim === bestSim && params > bestParams)) {
        best = c;
        bestSim = sim;
        bestParams = params;
      }
    }
    let cluster: Cluster;
    if (best && bestSim >= this.similarity) {
      cluster = best;
      for (let i = 0; i < tokens.length; i++) {
        if (cluster.tokens[i] !== tokens[i]) cluster.tokens[i] = WILDCARD;
      }
      cluster.size++;
    } else if (this.clusters.length >= this.maxTemplates) {
      cluster = this.overflow;
      cluster.size++;
    } else {
      cluster = { id: `L${this.clusters.length + 1}`, tokens: [...tokens], size: 1 };
      this.clusters.push(cluster);
      leaf.clusters.push(cluster);
    }
    if (this.cache.size >= LINE_CACHE_MAX) this.cache.clear();
    this.cache.set(masked, cluster);
    return cluster;
  }

  /** All templates mined so far, in order of first appearance. */
  templates(): readonly LogTemplate[] {
    return this.clusters;
  }

  /**
   * Restores templates saved from an earlier run (`templates()`, e.g. kept in run.db with the
   * Q-table), so the same log statements get the same ids — and states built from them the same
   * ids — in a later campaign. Call before the first `add`.
   */
  load(templates: readonly LogTemplate[]): void {
    if (this.clusters.length > 0) {
      throw new Error('Drain.load must be called before any line is added: ids would clash');
    }
    const sorted = [...templates].sort((a, b) => Number(a.id.slice(1)) - Number(b.id.slice(1)));
    for (const t of sorted) {
      if (!/^L\d+$/.test(t.id) || Number(t.id.slice(1)) !== this.clusters.length + 1) {
        throw new RangeError(
          `Drain.load needs ids L1, L2, … without gaps; got ${t.id} at ${this.clusters.length + 1}`,
        );
      }
      const cluster: Cluster = { id: t.id, tokens: [...t.tokens], size: t.size };
      this.clusters.push(cluster);
      this.leafFor(cluster.tokens).clusters.push(cluster);
    }
  }

  /**
   * The id of the template with these tokens, made here when this miner has none (a template
   * another campaign mined, `--exchange`): lines it matches later join it as if mined here.
   */
  adopt(tokens: readonly string[]): string {
    const same = (c: Cluster): boolean =>
      c.tokens.length === tokens.length && c.tokens.every((t, i) => t === tokens[i]);
    const found = this.clusters.find(same);
    if (found !== undefined) return found.id;
    if (this.clusters.length >= this.maxTemplates) return OVERFLOW_TEMPLATE_ID;
    const cluster: Cluster = { id: `L${this.clusters.length + 1}`, tokens: [...tokens], size: 0 };
    this.clusters.push(cluster);
    this.leafFor(cluster.tokens).clusters.push(cluster);
    return cluster.id;
  }

  /** The template text of an id (`undefined` for an unknown id). */
  template(id: string): string | undefined {
    const i = Number(id.slice(1)) - 1;
    return this.clusters[i]?.tokens.join(' ');
  }

  private leafFor(tokens: readonly string[]): TreeNode {
    const byLength = this.child(this.root, String(tokens.length));
    let node = byLength;
    const levels = Math.min(this.depth - 2, tokens.length);
    for (let i = 0; i < levels; i++) {
      const t = isVariable(tokens[i]) ? WILDCARD : tokens[i];
      node = this.child(node, t);
    }
    return node;
  }

  private child(node: TreeNode, token: string): TreeNode {
    const existing = node.children.get(token);
    if (existing) return existing;
    if (node.children.size >= this.maxChildren) {
      const wild = node.children.get(WILDCARD);
      if (wild) return wild;
      // The wildcard branch is always allowed, so a full node still routes every token.
      const created = newNode();
      node.children.set(WILDCARD, created);
      return created;
    }
    const created = newNode();
    node.children.set(token, created);
    return created;
  }

  /**
   * [share of equal non-wildcard tokens, number of wildcards in the template]; similarity −1 when
   * `splitWords` and the two differ in constant text.
   */
  private compare(
    template: readonly string[],
    tokens: readonly string[],
    splitWords: boolean,
  ): [number, number] {
    let equal = 0;
    let params = 0;
    for (let i = 0; i < template.length; i++) {
      if (template[i] === WILDCARD) params++;
      else if (template[i] === tokens[i]) equal++;
      else if (splitWords && !isVariable(template[i]) && !isVariable(tokens[i])) return [-1, params];
    }
    return [template.length === 0 ? 1 : equal / template.length, params];
  }
}
