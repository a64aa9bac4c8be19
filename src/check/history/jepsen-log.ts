import type { Op } from '../../core/op.js';
import { readEdnPrefix } from './edn.js';
import { ednOpValue } from './edn-op.js';
import { plainValue } from './edn-types.js';
import { HistoryError } from './history-error.js';
import { opFromFields } from './op-fields.js';
import type { ParsedHistory } from './parsed-history.js';
import { readNumber } from './read-number.js';

/**
 * Where an op starts on a Jepsen log line: after the logger's name, in each layout Jepsen has
 * logged with — `INFO  jepsen.util - 0 …`, `INFO [2017-…] jepsen worker 0 - jepsen.util 0 …` and
 * `2020-… INFO [jepsen worker 0] jepsen.util: 0 …` — when a process and a `:type` follow.
 */
const LOG_OP_START = /\bjepsen\.util(?:\s+-|:)?\s+(?=\S+\s+:)/;

/** A line of Jepsen's `history.txt`: `3\t:invoke\t:write\t4`, `:nemesis\t:info\t:start\tnil`. */
const HISTORY_TXT_OP = /^(?:\d+|:[\w.-]+)[ \t]+:(?:invoke|ok|fail|info)(?:[ \t]|$)/;

/** What starts an op line within a history.txt, a type that is not one included (it is named then). */
const HISTORY_TXT_OP_START = /^(?:\d+|:[\w.-]+)[ \t]+:\S/;

/** `<process> :<type> <f> <value> <error>`: Jepsen's op->str, tabs or spaces between. */
const OP_TEXT = /^(\S+)\s+:(\S+)(?:\s+([^]*))?$/;

const OP_SHAPE = '<process> :<type> :<f> <value> [<error>]';

/** True when some line of `text` is a Jepsen log line holding an op. */
export function hasJepsenLogOps(text: string): boolean {
  return /\bjepsen\.util(?:\s+-|:)?\s+\S+\s+:/.test(text);
}

/** True when `line` is an op as Jepsen writes them to `history.txt` (no log prefix). */
export function isHistoryTxtLine(line: string): boolean {
  return HISTORY_TXT_OP.test(line);
}

function readProcess(text: string): unknown {
  if (/^\d+$/.test(text)) return readNumber(text) ?? text;
  return text.replace(/^:/, '');
}

/**
 * One op from its text: the f and the value are EDN forms (a value may hold spaces: a map, a
 * string); whatever follows the value is the op's error, as Jepsen prints it (`:timeout`,
 * `indeterminate: Read timed out`).
 */
function readOp(opText: string, file: string, line: number, position: number): Op {
  const m = OP_TEXT.exec(opText.trim());
  if (m === null) throw new HistoryError(`${file}:${line}: cannot read this Jepsen op: expected ${OP_SHAPE}`);
  const [, processText, type, afterType = ''] = m;
  const fields: Record<string, unknown> = {
    type,
    process: readProcess(processText),
    index: position,
    time: position,
  };
  let rest = afterType.trim();
  if (rest !== '') {
    const f = readEdnPrefix(rest, file, line);
    fields.f = plainValue(f.value);
    rest = f.rest.trim();
  }
  if (rest !== '') {
    const value = readEdnPrefix(rest, file, line);
    fields.value = ednOpValue(fields.f, value.value).value;
    rest = value.rest.trim();
  }
  if (rest !== '') fields.error = rest;
  const op = opFromFields(fields, position);
  if (typeof op === 'string') throw new HistoryError(`${file}:${line}: ${op}`);
  return op;
}

/**
 * Reads Jepsen log lines (jepsen.log, or a console copy) in any of Jepsen's log layouts. Other
 * log lines are skipped; a line that looks like an op but does not read is an error, and so is a
 * file with no op at all.
 */
export function parseJepsenLog(text: string, file: string): ParsedHistory {
  const ops: Op[] = [];
  const lines: number[] = [];
  const rows = text.split('\n');
  for (let i = 0; i < rows.length; i++) {
    const start = LOG_OP_START.exec(rows[i]);
    if (start === null) continue;
    const line = i + 1;
    ops.push(readOp(rows[i].slice(start.index + start[0].length), file, line, ops.length));
    lines.push(line);
  }
  if (ops.length === 0) {
    throw new HistoryError(
      `${file}:1: no Jepsen op lines ("INFO jepsen.util - ${OP_SHAPE}", or "jepsen.util:" in newer logs)`,
    );
  }
  return { format: 'jepsen-log', ops, lines };
}

/**
 * Reads Jepsen's `history.txt`: one op a line, `<process>\t:<type>\t:<f>\t<value>`, then the
 * error if any. Jepsen prints an error as text, which may run over several lines: a line that is
 * not an op continues the error of the op before it.
 */
export function parseJepsenHistoryTxt(text: string, file: string): ParsedHistory {
  const ops: Op[] = [];
  const lines: number[] = [];
  const rows = text.split('\n');
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i].trimEnd();
    if (row.trim() === '') continue;
    const line = i + 1;
    if (!HISTORY_TXT_OP_START.test(row)) {
      const last = ops.at(-1);
      if (last?.error === undefined) {
        throw new HistoryError(
          `${file}:${line}: not a history.txt op: expected ${OP_SHAPE}, tab-separated, one op a line`,
        );
      }
      ops[ops.length - 1] = { ...last, error: `${last.error}\n${row}` };
      continue;
    }
    ops.push(readOp(row, file, line, ops.length));
    lines.push(line);
  }
  return { format: 'jepsen-txt', ops, lines };
}
