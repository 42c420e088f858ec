/** Types of scripts/pe-signature.mjs (plain JavaScript: scripts/package.mjs runs it before anything is compiled). */
export declare function certificateTable(pe: Buffer): { offset: number; size: number } | undefined;
export declare function checksumOffset(pe: Buffer): number;
export declare function peChecksum(pe: Buffer): number;
export declare function withoutSignature(pe: Buffer): Buffer;
