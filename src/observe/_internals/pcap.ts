/** One TCP segment with a payload, as seen on the capture interface. */
export interface TcpSegment {
  /** Capture time in ns since the Unix epoch. */
  readonly wallNs: number;
  readonly src: string;
  readonly dst: string;
  readonly srcPort: number;
  readonly dstPort: number;
  readonly seq: number;
  readonly payloadBytes: number;
}

const GLOBAL_HEADER_BYTES = 24;
const RECORD_HEADER_BYTES = 16;
const ETHERNET_HEADER_BYTES = 14;
const ETHERTYPE_IPV4 = 0x0800;
const ETHERTYPE_VLAN = 0x8100;
const IP_PROTO_TCP = 6;
const LINKTYPE_ETHERNET = 1;
const MAGIC_US = 0xa1b2c3d4;
const MAGIC_NS = 0xa1b23c4d;

/**
 * Incremental parser of a pcap stream (as `tcpdump -w - -U` writes it): feed it chunks, get the TCP
 * segments that carry data. Empty segments (pure ACKs, SYN, FIN) are skipped.
 */
export class PcapParser {
  private buffer: Buffer = Buffer.alloc(0);
  private littleEndian = true;
  private nanoTimestamps = false;
  private headerRead = false;

  push(chunk: Buffer): TcpSegment[] {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const out: TcpSegment[] = [];
    let offset = 0;
    if (!this.headerRead) {
      if (this.buffer.length < GLOBAL_HEADER_BYTES) return out;
      this.readGlobalHeader();
      offset = GLOBAL_HEADER_BYTES;
    }
    while (this.buffer.length - offset >= RECORD_HEADER_BYTES) {
      const sec = this.u32(offset);
      const frac = this.u32(offset + 4);
      const inclLen = this.u32(offset + 8);
      if (this.buffer.length - offset - RECORD_HEADER_BYTES < inclLen) break;
      const start = offset + RECORD_HEADER_BYTES;
      const wallNs = sec * 1e9 + (this.nanoTimestamps ? frac : frac * 1000);
      const segment = parseEthernet(this.buffer.subarray(start, start + inclLen), wallNs);
      if (segment) out.push(segment);
      offset = start + inclLen;
    }
    this.buffer = this.buffer.subarray(offset);
    return out;
  }

  private readGlobalHeader(): void {
    const le = this.buffer.readUInt32LE(0);
    const be = this.buffer.readUInt32BE(0);
    if (le === MAGIC_US || le === MAGIC_NS) this.littleEndian = true;
    else if (be === MAGIC_US || be === MAGIC_NS) this.littleEndian = false;
    else throw new Error(`not a pcap stream (magic 0x${be.toString(16)})`);
    this.nanoTimestamps = (this.littleEndian ? le : be) === MAGIC_NS;
    const linkType = this.u32(20);
    if (linkType !== LINKTYPE_ETHERNET) throw new Error(`pcap link type ${linkType} is not Ethernet`);
    this.headerRead = true;
  }

  private u32(offset: number): number {
    return this.littleEndian ? this.buffer.readUInt32LE(offset) : this.buffer.readUInt32BE(offset);
  }
}

function parseEthernet(frame: Buffer, wallNs: number): TcpSegment | undefined {
  if (frame.length < ETHERNET_HEADER_BYTES) return undefined;
  let etherType = frame.readUInt16BE(12);
  let ipStart = ETHERNET_HEADER_BYTES;
  if (etherType === ETHERTYPE_VLAN && frame.length >= ETHERNET_HEADER_BYTES + 4) {
    etherType = frame.readUInt16BE(16);
    ipStart += 4;
  }
  if (etherType !== ETHERTYPE_IPV4) return undefined;
  return parseIpv4(frame.subarray(ipStart), wallNs);
}

function parseIpv4(packet: Buffer, wallNs: number): TcpSegment | undefined {
  if (packet.length < 20 || packet[0] >> 4 !== 4) return undefined;
  const ihl = (packet[0] & 0x0f) * 4;
  const totalLength = packet.readUInt16BE(2);
  if (packet[9] !== IP_PROTO_TCP || packet.length < ihl + 20) return undefined;
  const tcp = packet.subarray(ihl);
  const dataOffset = (tcp[12] >> 4) * 4;
  const payloadBytes = totalLength - ihl - dataOffset;
  if (payloadBytes <= 0) return undefined;
  return {
    wallNs,
    src: ipString(packet, 12),
    dst: ipString(packet, 16),
    srcPort: tcp.readUInt16BE(0),
    dstPort: tcp.readUInt16BE(2),
    seq: tcp.readUInt32BE(4),
    payloadBytes,
  };
}

function ipString(packet: Buffer, offset: number): string {
  return `${packet[offset]}.${packet[offset + 1]}.${packet[offset + 2]}.${packet[offset + 3]}`;
}
