/**
 * NATS JetStream with a read/write register only (no cas):
 *
 *   mallory run --system examples/nats/read-write.ts --time 3m
 */
import { readWrite } from './index.js';

export default readWrite;
