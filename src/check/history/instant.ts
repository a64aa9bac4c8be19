/**
 * RFC 3339 as Clojure's `#inst` reader takes it: `yyyy`, then optionally `-mm`, `-dd`,
 * `Thh:mm:ss`, a fraction and an offset (`Z` or `±hh:mm`); missing parts are their least value.
 */
const INSTANT =
  /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?)?)?(?:([Zz])|([+-])(\d{2}):(\d{2}))?$/;

const MS_PER_MINUTE = 60_000;
const MS_DIGITS = 3;

/**
 * The instant an `#inst` string denotes, in ms since 1970 (Clojure reads it into a Date, which
 * keeps ms: finer digits do not count), or undefined when it is not one.
 */
export function instantMs(text: string): number | undefined {
  const m = INSTANT.exec(text);
  if (m === null) return undefined;
  const [, y, mo = '01', d = '01', h = '00', mi = '00', s = '00', frac = '', , sign, oh = '00', om = '00'] =
    m;
  const parts = [y, mo, d, h, mi, s].map(Number);
  const [year, month, day, hour, minute, second] = parts;
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60)
    return undefined;
  const ms = Number(frac.slice(0, MS_DIGITS).padEnd(MS_DIGITS, '0'));
  const local = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  if (new Date(local).getUTCDate() !== day) return undefined;
  const offset = (Number(oh) * 60 + Number(om)) * MS_PER_MINUTE;
  return sign === '-' ? local + offset : sign === '+' ? local - offset : local;
}
