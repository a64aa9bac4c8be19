import type { Policy } from './policy.js';
import { RandomPolicy } from './random.js';

export function createPolicy(name: string): Policy {
  switch (name) {
    case 'random':
      return new RandomPolicy();
    default:
      throw new Error(`policy ${name} is not available`);
  }
}
