/**
 * How many tries the printed replay of a bug asks for: one for a bug of a simulated run (its world
 * replays exactly, so one try tells), ten for a real run's (a rate: real timing varies).
 */
export function replayTries(simulated: boolean): number {
  return simulated ? 1 : 10;
}

/**
 * The command that replays a bug, as the terminal, results.json and the fleet report print it:
 * `<command> replay <dir>`, with `--repeat 10` for a real run's bug only.
 */
export function replayCommand(command: string, bugDir: string, simulated: boolean): string {
  const tries = replayTries(simulated);
  return `${command} replay ${bugDir}${tries === 1 ? '' : ` --repeat ${tries}`}`;
}
