/**
 * Removes the Authenticode signature from a Windows executable (a PE file), as `signtool remove /s`
 * does, in plain JavaScript so `npm run package` does it on Linux, macOS and Windows alike. Node's
 * official node.exe is signed by the Node.js project; once giftdrop is injected into it that
 * signature no longer matches the file (Windows would call it corrupted), so scripts/package.mjs
 * removes it first, as Node's single-executable documentation does before injecting.
 *
 * The PE format keeps the signature in the "certificate table": data directory 4 of the optional
 * header gives its FILE offset and size, and the table sits at the end of the file. Removing it is:
 * cut the file at the table's offset, zero that directory entry, and write the header checksum
 * again (the algorithm of Windows' CheckSumMappedFile). A table anywhere but the end of the file
 * is refused with a message: cutting there would lose what follows it.
 * Pure functions on Buffers; no I/O. checksumOffset and peChecksum let the packaging write the
 * checksum of the finished file again (the injection does not).
 */

const MZ = 0x5a4d;
const PE_SIGNATURE = 0x00004550; // "PE\0\0"
const PE32 = 0x10b;
const PE32_PLUS = 0x20b;
const CERTIFICATE_DIRECTORY = 4;

/** Where the optional header's fields are in `pe` (throws on a file that is not a PE image). */
function layout(pe) {
  if (pe.length < 0x40 || pe.readUInt16LE(0) !== MZ) throw new Error('not a Windows executable (no MZ header)');
  const header = pe.readUInt32LE(0x3c);
  if (header + 24 > pe.length || pe.readUInt32LE(header) !== PE_SIGNATURE)
    throw new Error('not a Windows executable (no PE header)');
  const optional = header + 24;
  const magic = pe.readUInt16LE(optional);
  if (magic !== PE32 && magic !== PE32_PLUS)
    throw new Error(`not a Windows executable (optional header magic 0x${magic.toString(16)})`);
  const directories = optional + (magic === PE32_PLUS ? 112 : 96);
  const count = pe.readUInt32LE(directories - 4); // NumberOfRvaAndSizes
  return {
    checksumAt: optional + 64,
    certificateEntryAt: count > CERTIFICATE_DIRECTORY ? directories + 8 * CERTIFICATE_DIRECTORY : undefined,
  };
}

/** The certificate table's file offset and size, or undefined when the file carries none. */
export function certificateTable(pe) {
  const { certificateEntryAt } = layout(pe);
  if (certificateEntryAt === undefined) return undefined;
  const offset = pe.readUInt32LE(certificateEntryAt);
  const size = pe.readUInt32LE(certificateEntryAt + 4);
  return offset === 0 && size === 0 ? undefined : { offset, size };
}

/** The file offset of `pe`'s header checksum (a 32-bit little-endian field). */
export function checksumOffset(pe) {
  return layout(pe).checksumAt;
}

/** The PE header checksum of `pe` as Windows computes it (the checksum field itself counted as 0). */
export function peChecksum(pe) {
  const { checksumAt } = layout(pe);
  let sum = 0;
  const even = pe.length & ~1;
  for (let i = 0; i < even; i += 2) {
    if (i === checksumAt || i === checksumAt + 2) continue;
    sum += pe.readUInt16LE(i);
    sum = (sum & 0xffff) + (sum >>> 16);
  }
  if (even !== pe.length) {
    sum += pe[even];
    sum = (sum & 0xffff) + (sum >>> 16);
  }
  sum = (sum & 0xffff) + (sum >>> 16);
  return (sum + pe.length) >>> 0;
}

/**
 * `pe` without its certificate table (a new Buffer; `pe` itself is not changed), its checksum
 * written again. A file with no table comes back as an unchanged copy.
 */
export function withoutSignature(pe) {
  const table = certificateTable(pe);
  if (!table) return Buffer.from(pe);
  const end = table.offset + table.size;
  // The table is padded to 8 bytes; anything after that padding is not the signature's.
  if (table.offset > pe.length || end > pe.length || pe.length - end > 7) {
    throw new Error(
      `the certificate table (bytes ${table.offset}-${end} of ${pe.length}) is not at the end of the file; remove the signature with signtool remove /s`,
    );
  }
  const out = Buffer.from(pe.subarray(0, table.offset));
  const { certificateEntryAt, checksumAt } = layout(out);
  out.writeUInt32LE(0, certificateEntryAt);
  out.writeUInt32LE(0, certificateEntryAt + 4);
  out.writeUInt32LE(peChecksum(out), checksumAt);
  return out;
}
