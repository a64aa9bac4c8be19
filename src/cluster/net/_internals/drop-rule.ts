/**
 * The iptables rule (its words after `-A`/`-D`) that drops what `source` sends to the machine it is
 * added on (a cut), or a `probability` share of it (packet loss, iptables' `statistic` match),
 * tagged with the run's comment so a rule of one run is never taken for another's.
 */
export function inputDropRule(source: string, comment: string, probability?: number): readonly string[] {
  return [
    'INPUT',
    '-s',
    source,
    ...(probability === undefined
      ? []
      : ['-m', 'statistic', '--mode', 'random', '--probability', String(probability)]),
    '-m',
    'comment',
    '--comment',
    comment,
    '-j',
    'DROP',
  ];
}
