/**
 * The `tc` arguments (after `tc`) of the filter that sends what a device sends to `address` into
 * band 4 of its root prio qdisc (`1:`), where the netem qdisc `40:` is: only that link is
 * degraded, the device's other traffic goes on through the prio bands as before.
 */
export function netemDstFilterArgs(device: string, address: string): string[] {
  return [
    'filter',
    'add',
    'dev',
    device,
    'parent',
    '1:',
    'protocol',
    'ip',
    'prio',
    '1',
    'u32',
    'match',
    'ip',
    'dst',
    `${address}/32`,
    'flowid',
    '1:4',
  ];
}
