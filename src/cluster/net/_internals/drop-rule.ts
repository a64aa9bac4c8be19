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

/**
 * The iptables rules (their words after `-I`/`-D`) that keep the fuzzer's control connections out
 * of every cut: packets to or from an SSH port of the run's hosts are accepted before any drop. A
 * host that shares an address with the fuzzer (sshd on loopback, `--hosts 127.0.0.1:2222,…`, or
 * several hosts on one kernel) would otherwise have a cut from that address drop the fuzzer's own
 * SSH, and the run could no longer heal it. Inserted at the head of INPUT, tagged as the drops are.
 */
export function controlAcceptRules(sshPorts: readonly number[], comment: string): (readonly string[])[] {
  return [...new Set(sshPorts)].flatMap((port) =>
    (['--dport', '--sport'] as const).map((direction) => [
      'INPUT',
      '-p',
      'tcp',
      direction,
      String(port),
      '-m',
      'comment',
      '--comment',
      comment,
      '-j',
      'ACCEPT',
    ]),
  );
}
