import { SYSTEMS } from '../../systems/index.js';

/** The built-in systems and each one's bug switches, from the registry `--system` reads. */
export function systemsHelp(): string {
  const rows = Object.values(SYSTEMS).map(
    (d) => `  ${d.name.padEnd(12)} --bug ${d.bugs.length > 0 ? d.bugs.join(', ') : '(none)'}`,
  );
  return `\nBuilt-in systems (--system NAME) and their bug switches (--bug NAME):\n${rows.join('\n')}\n`;
}
