/** Captured stdout/stderr for CLI run functions. */
export function captureIo(dataDir: string): {
  io: { dataDir: string; out: { write(t: string): boolean }; err: { write(t: string): boolean } };
  out: () => string;
  err: () => string;
} {
  let out = '';
  let err = '';
  return {
    io: {
      dataDir,
      out: { write: (t: string) => ((out += t), true) },
      err: { write: (t: string) => ((err += t), true) },
    },
    out: () => out,
    err: () => err,
  };
}
