import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { encodePublish, NatsProtocolError, parseHeaders, ProtocolParser } from '../protocol.js';

describe('ProtocolParser', () => {
  it('parses INFO, PING, PONG, +OK and -ERR lines', () => {
    const ops = new ProtocolParser().feed(
      Buffer.from(
        'INFO {"server_name":"n1","headers":true} \r\nPING\r\nPONG\r\n+OK\r\n-ERR \'Stale Connection\'\r\n',
      ),
    );
    expect(ops).toEqual([
      { op: 'info', info: { server_name: 'n1', headers: true } },
      { op: 'ping' },
      { op: 'pong' },
      { op: 'ok' },
      { op: 'err', message: 'Stale Connection' },
    ]);
  });

  it('parses MSG with and without a reply subject, payload counted in bytes', () => {
    const ops = new ProtocolParser().feed(
      Buffer.from('MSG _INBOX.a.1 1 26\r\n{"stream":"KV_b", "seq":2}\r\nMSG s 9 r.x 4\r\nhé!\r\n'),
    );
    expect(ops).toHaveLength(2);
    expect(ops[0]).toMatchObject({ op: 'msg', subject: '_INBOX.a.1', sid: '1' });
    expect(ops[0]).not.toHaveProperty('reply');
    expect(ops[1]).toMatchObject({ op: 'msg', subject: 's', sid: '9', reply: 'r.x' });
    expect((ops[1] as { payload: Buffer }).payload.toString()).toBe('hé!');
  });

  it('parses HMSG: an inline status (503 no responders) and header fields', () => {
    const [noResponders] = new ProtocolParser().feed(
      Buffer.from('HMSG _INBOX.a.8 1 16 16\r\nNATS/1.0 503\r\n\r\n\r\n'),
    );
    expect(noResponders).toMatchObject({ op: 'msg', headers: { status: 503 } });
    expect((noResponders as { payload: Buffer }).payload.length).toBe(0);
    const block = 'NATS/1.0\r\nKV-Operation: DEL\r\n\r\n';
    const [withFields] = new ProtocolParser().feed(
      Buffer.from(`HMSG $KV.b.k 2 reply ${block.length} ${block.length + 1}\r\n${block}7\r\n`),
    );
    expect(withFields).toMatchObject({ op: 'msg', reply: 'reply' });
    const msg = withFields as {
      headers: { fields: ReadonlyMap<string, readonly string[]> };
      payload: Buffer;
    };
    expect(msg.headers.fields.get('KV-Operation')).toEqual(['DEL']);
    expect(msg.payload.toString()).toBe('7');
  });

  it('gives the same messages however the stream is cut into chunks', () => {
    const stream = Buffer.concat([
      Buffer.from('INFO {"a":1}\r\nMSG x 1 r 5\r\nhello\r\nPING\r\n'),
      encodeReplyFrame('HMSG y 1 ', 'NATS/1.0 408 Request Timeout\r\n\r\n', 'body\r\n'),
      Buffer.from('MSG z 1 0\r\n\r\n'),
    ]);
    const whole = new ProtocolParser().feed(stream);
    expect(whole.map((o) => o.op)).toEqual(['info', 'msg', 'ping', 'msg', 'msg']);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: stream.length - 1 }), { maxLength: 8 }), (cuts) => {
        const points = [...new Set(cuts)].sort((a, b) => a - b);
        const parser = new ProtocolParser();
        const ops = [0, ...points].flatMap((start, i) =>
          parser.feed(stream.subarray(start, points[i] ?? stream.length)),
        );
        expect(ops).toEqual(whole);
      }),
    );
  });

  it('throws on an unknown line or a payload not followed by CRLF', () => {
    expect(() => new ProtocolParser().feed(Buffer.from('HELLO\r\n'))).toThrow(NatsProtocolError);
    expect(() => new ProtocolParser().feed(Buffer.from('MSG a 1 2\r\nabc\r\n'))).toThrow(
      /not followed by CRLF/,
    );
  });
});

describe('encodePublish', () => {
  it('writes PUB with a reply subject and the payload size in bytes', () => {
    expect(encodePublish('$KV.b.k', '_INBOX.x.1', Buffer.from('12')).toString()).toBe(
      'PUB $KV.b.k _INBOX.x.1 2\r\n12\r\n',
    );
  });

  it('writes HPUB with header and total sizes, which the parser reads back', () => {
    const frame = encodePublish('$KV.b.k', 'r', Buffer.from('9'), {
      'Nats-Expected-Last-Subject-Sequence': '41',
    });
    const text = frame.toString();
    const block = 'NATS/1.0\r\nNats-Expected-Last-Subject-Sequence: 41\r\n\r\n';
    expect(text).toBe(`HPUB $KV.b.k r ${block.length} ${block.length + 1}\r\n${block}9\r\n`);
    const [msg] = new ProtocolParser().feed(
      Buffer.from(text.replace(/^HPUB/, 'HMSG').replace(' r ', ' 1 r ')),
    );
    expect(msg).toMatchObject({ op: 'msg', subject: '$KV.b.k', reply: 'r' });
    expect(parseHeaders(Buffer.from(block)).fields.get('Nats-Expected-Last-Subject-Sequence')).toEqual([
      '41',
    ]);
  });
});

function encodeReplyFrame(prefix: string, block: string, body: string): Buffer {
  const payload = body.slice(0, -2);
  return Buffer.from(`${prefix}${block.length} ${block.length + payload.length}\r\n${block}${body}`);
}
