import { describe, expect, it } from 'vitest';

import { PcapParser } from '../../../src/observe/_internals/pcap.js';

function globalHeader(): Buffer {
  const b = Buffer.alloc(24);
  b.writeUInt32LE(0xa1b2c3d4, 0);
  b.writeUInt16LE(2, 4);
  b.writeUInt16LE(4, 6);
  b.writeUInt32LE(65535, 16);
  b.writeUInt32LE(1, 20);
  return b;
}

function tcpFrame(src: number[], dst: number[], seq: number, payload: number): Buffer {
  const eth = Buffer.alloc(14);
  eth.writeUInt16BE(0x0800, 12);
  const ip = Buffer.alloc(20);
  ip[0] = 0x45;
  ip.writeUInt16BE(20 + 20 + payload, 2);
  ip[9] = 6;
  Buffer.from(src).copy(ip, 12);
  Buffer.from(dst).copy(ip, 16);
  const tcp = Buffer.alloc(20);
  tcp.writeUInt16BE(2380, 0);
  tcp.writeUInt16BE(40000, 2);
  tcp.writeUInt32BE(seq, 4);
  tcp[12] = 5 << 4;
  return Buffer.concat([eth, ip, tcp, Buffer.alloc(payload)]);
}

function record(frame: Buffer, sec: number, usec: number): Buffer {
  const h = Buffer.alloc(16);
  h.writeUInt32LE(sec, 0);
  h.writeUInt32LE(usec, 4);
  h.writeUInt32LE(frame.length, 8);
  h.writeUInt32LE(frame.length, 12);
  return Buffer.concat([h, frame]);
}

describe('PcapParser', () => {
  it('parses TCP segments with data across arbitrary chunk boundaries and skips empty ones', () => {
    const stream = Buffer.concat([
      globalHeader(),
      record(tcpFrame([10, 1, 2, 1], [10, 1, 2, 2], 7, 100), 5, 250),
      record(tcpFrame([10, 1, 2, 2], [10, 1, 2, 1], 9, 0), 5, 300),
      record(tcpFrame([10, 1, 2, 2], [10, 1, 2, 1], 11, 3), 6, 0),
    ]);
    for (const cut of [1, 23, 24, 40, 70, stream.length - 1]) {
      const parser = new PcapParser();
      const segments = [...parser.push(stream.subarray(0, cut)), ...parser.push(stream.subarray(cut))];
      expect(segments).toEqual([
        {
          wallNs: 5_000_250_000,
          src: '10.1.2.1',
          dst: '10.1.2.2',
          srcPort: 2380,
          dstPort: 40000,
          seq: 7,
          payloadBytes: 100,
        },
        {
          wallNs: 6_000_000_000,
          src: '10.1.2.2',
          dst: '10.1.2.1',
          srcPort: 2380,
          dstPort: 40000,
          seq: 11,
          payloadBytes: 3,
        },
      ]);
    }
  });

  it('rejects a stream that is not pcap', () => {
    expect(() => new PcapParser().push(Buffer.alloc(24, 7))).toThrow(/not a pcap stream/);
  });
});
