import { describe, expect, it } from 'vitest';

import type { RequestOutcome } from '../connection.js';
import { bucketConfig, keySubject, lastValue, publishOutcome, STREAM, streamLeader } from '../jetstream.js';

function reply(json: unknown): RequestOutcome {
  return { kind: 'reply', payload: Buffer.from(JSON.stringify(json)) };
}

const base64 = (text: string): string => Buffer.from(text).toString('base64');

describe('keySubject', () => {
  it('keeps a workload key as one subject token and escapes what a token may not hold', () => {
    expect(keySubject('s3-k12')).toBe('$KV.mallory.s3-k12');
    expect(keySubject('a.b *>')).toBe('$KV.mallory.a=2eb=20=2a=3e');
  });
});

describe('bucketConfig', () => {
  it('is a KV bucket with history 1 whose reads go to the leader', () => {
    expect(bucketConfig(3)).toMatchObject({
      name: STREAM,
      subjects: ['$KV.mallory.>'],
      num_replicas: 3,
      max_msgs_per_subject: 1,
      allow_direct: false,
      deny_delete: true,
    });
  });
});

describe('lastValue', () => {
  it('reads the value and the sequence of the key’s last message', () => {
    const get = reply({ message: { subject: '$KV.mallory.k', seq: 41, data: base64('17'), time: 'x' } });
    expect(lastValue(get)).toEqual({ kind: 'found', value: 17, seq: 41 });
  });

  it('reads "no message found" as a key never written', () => {
    const get = reply({ error: { code: 404, err_code: 10037, description: 'no message found' } });
    expect(lastValue(get)).toEqual({ kind: 'missing' });
  });

  it('reads a KV delete marker as no value', () => {
    const hdrs = base64('NATS/1.0\r\nKV-Operation: DEL\r\n\r\n');
    expect(lastValue(reply({ message: { seq: 5, hdrs } }))).toEqual({ kind: 'missing' });
  });

  it('reports any other answer as an error', () => {
    const unavailable = {
      code: 503,
      err_code: 10008,
      description: 'JetStream system temporarily unavailable',
    };
    expect(lastValue(reply({ error: unavailable }))).toMatchObject({ kind: 'error' });
    expect(lastValue({ kind: 'timeout', error: 'no reply' })).toMatchObject({ kind: 'error' });
    expect(lastValue(reply({ message: { seq: 5, data: base64('x') } }))).toMatchObject({ kind: 'error' });
  });
});

describe('publishOutcome', () => {
  it('is ok on a PubAck from the bucket stream', () => {
    expect(publishOutcome(reply({ stream: STREAM, seq: 3 }))).toEqual({ type: 'ok' });
  });

  it('is fail only when the write certainly was not stored', () => {
    const wrong = { code: 400, err_code: 10071, description: 'wrong last sequence: 141' };
    expect(publishOutcome(reply({ error: wrong }))).toEqual({
      type: 'fail',
      error: 'wrong last sequence: 141 (err_code 10071)',
    });
    expect(publishOutcome({ kind: 'no-responders' })).toMatchObject({ type: 'fail' });
    expect(publishOutcome({ kind: 'not-sent', error: 'connect ECONNREFUSED' })).toMatchObject({
      type: 'fail',
    });
  });

  it('is info when the write may have been stored', () => {
    const unavailable = {
      code: 503,
      err_code: 10008,
      description: 'JetStream system temporarily unavailable',
    };
    expect(publishOutcome(reply({ error: unavailable }))).toMatchObject({ type: 'info' });
    expect(publishOutcome({ kind: 'timeout', error: 'no reply' })).toMatchObject({ type: 'info' });
    expect(publishOutcome({ kind: 'lost', error: 'connection closed' })).toMatchObject({ type: 'info' });
    expect(publishOutcome(reply({ stream: 'OTHER', seq: 3 }))).toMatchObject({ type: 'info' });
  });
});

describe('streamLeader', () => {
  it('names the leader of a STREAM.INFO answer, if any', () => {
    expect(streamLeader(reply({ config: {}, cluster: { name: 'mallory', leader: 'n3' } }))).toBe('n3');
    expect(streamLeader(reply({ config: {}, cluster: { name: 'mallory' } }))).toBeUndefined();
    expect(
      streamLeader(reply({ error: { code: 404, err_code: 10059, description: 'stream not found' } })),
    ).toBe(undefined);
  });
});
