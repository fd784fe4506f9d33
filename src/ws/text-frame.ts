/**
 * The bytes of one unmasked, unfragmented WebSocket text frame (RFC 6455 §5.2), as a server
 * sends a message: header, then the payload as is. The events hub frames each message once and
 * writes the same bytes to every peer, where `ws` would frame it again for each one.
 */
export function textFrame(payload: Buffer): Buffer[] {
  const n = payload.length;
  const header = Buffer.allocUnsafe(n < 126 ? 2 : n < 65_536 ? 4 : 10);
  header[0] = 0x81; // FIN, opcode 1 (text)
  if (n < 126) {
    header[1] = n;
  } else if (n < 65_536) {
    header[1] = 126;
    header.writeUInt16BE(n, 2);
  } else {
    header[1] = 127;
    header.writeBigUInt64BE(BigInt(n), 2);
  }
  return [header, payload];
}
