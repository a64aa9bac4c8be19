import { UsageError } from '../../core/errors.js';
import { FAULT_FAMILIES, type FaultFamily } from '../../core/fault.js';
import { badFaultTarget } from '../../core/fault-targets.js';

/**
 * `--faults partition,kill:one,kill:minority`: the families, and the targets some are kept to. A
 * family named plainly anywhere in the list takes every target.
 */
export function parseFaultsFlag(spec: string): {
  faults: FaultFamily[];
  faultTargets: Partial<Record<FaultFamily, string[]>>;
} {
  const faults: FaultFamily[] = [];
  const plain = new Set<FaultFamily>();
  const targets: Partial<Record<FaultFamily, string[]>> = {};
  for (const item of spec.split(',').map((f) => f.trim())) {
    const [name, target, extra] = item.split(':');
    if (!(FAULT_FAMILIES as readonly string[]).includes(name)) {
      throw new UsageError(
        'bad-flag',
        `--faults: unknown fault "${item}": choose from ${FAULT_FAMILIES.join(', ')} (FAMILY:TARGET keeps a family to a target, e.g. kill:one)`,
      );
    }
    const family = name as FaultFamily;
    if (!faults.includes(family)) faults.push(family);
    if (target === undefined) {
      plain.add(family);
      continue;
    }
    const why = extra === undefined ? badFaultTarget(family, [target]) : `"${item}" is not FAMILY:TARGET`;
    if (why !== undefined) throw new UsageError('bad-flag', `--faults: ${why}`);
    const kept = (targets[family] ??= []);
    if (!kept.includes(target)) kept.push(target);
  }
  const faultTargets = Object.fromEntries(
    Object.entries(targets).filter(([family]) => !plain.has(family as FaultFamily)),
  ) as Partial<Record<FaultFamily, string[]>>;
  return { faults, faultTargets };
}
