/**
 * The bot's icon and its route (`GET /favicon.ico`, asked for by every browser on every page of
 * both listeners: overlay, dashboard, verify and claim pages): a 32x32 purple gift box with a
 * yellow ribbon, drawn here into a Windows icon file (one 32-bit BMP image) once, so no binary
 * file lives in the repository.
 *
 * Contract: `FAVICON_ICO` is a valid `.ico` (image/x-icon) of 32x32 pixels with transparency;
 * `faviconRoute` answers `/favicon.ico` only (GET and HEAD; 405 otherwise) and returns false for
 * any other path.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

const SIZE = 32;
const PURPLE = [0x6d, 0x28, 0xd9] as const; // the pages' accent colour
const YELLOW = [0xfa, 0xcc, 0x15] as const; // the overlay's winner colour

/** RGBA of the pixel at (x, y), y from the top. */
function pixel(x: number, y: number): readonly [number, number, number, number] {
  const r = 5; // corner radius of the box (2..29)
  const cx = x < 2 + r ? 2 + r : x > 29 - r ? 29 - r : x;
  const cy = y < 2 + r ? 2 + r : y > 29 - r ? 29 - r : y;
  const inside = x >= 2 && x <= 29 && y >= 2 && y <= 29 && (x - cx) ** 2 + (y - cy) ** 2 <= r * r;
  if (!inside) return [0, 0, 0, 0];
  const ribbon = (x >= 14 && x <= 17) || (y >= 14 && y <= 17);
  const [red, green, blue] = ribbon ? YELLOW : PURPLE;
  return [red, green, blue, 255];
}

function drawIcon(): Buffer {
  const pixels = Buffer.alloc(SIZE * SIZE * 4);
  // BMP rows go bottom-up, pixels as BGRA
  for (let row = 0; row < SIZE; row++) {
    const y = SIZE - 1 - row;
    for (let x = 0; x < SIZE; x++) {
      const [r, g, b, a] = pixel(x, y);
      pixels.set([b, g, r, a], (row * SIZE + x) * 4);
    }
  }
  const mask = Buffer.alloc((SIZE / 8) * SIZE); // the AND mask: all 0 (the alpha channel decides)
  const info = Buffer.alloc(40);
  info.writeUInt32LE(40, 0); // BITMAPINFOHEADER
  info.writeInt32LE(SIZE, 4);
  info.writeInt32LE(SIZE * 2, 8); // height counts the image and its mask
  info.writeUInt16LE(1, 12);
  info.writeUInt16LE(32, 14);
  info.writeUInt32LE(pixels.length + mask.length, 20);
  const image = Buffer.concat([info, pixels, mask]);
  const head = Buffer.alloc(6 + 16);
  head.writeUInt16LE(1, 2); // type: icon
  head.writeUInt16LE(1, 4); // one image
  head.writeUInt8(SIZE, 6);
  head.writeUInt8(SIZE, 7);
  head.writeUInt16LE(1, 10); // planes
  head.writeUInt16LE(32, 12); // bits per pixel
  head.writeUInt32LE(image.length, 14);
  head.writeUInt32LE(head.length, 18);
  return Buffer.concat([head, image]);
}

const FAVICON_ICO: Buffer = drawIcon();

/** The 405's headers: the overlay's (its pages' strict policy). */
const REFUSAL_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/**
 * `GET /favicon.ico`: every browser asks for it on every page (overlay, dashboard, verify and
 * claim pages), on both listeners: no 404s. False for any other path.
 */
export function faviconRoute(req: IncomingMessage, res: ServerResponse): boolean {
  if (new URL(req.url ?? '/', 'http://localhost').pathname !== '/favicon.ico') return false;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { 'content-type': 'text/plain; charset=utf-8', ...REFUSAL_HEADERS });
    res.end('method not allowed\n');
  } else {
    res.writeHead(200, {
      'content-type': 'image/x-icon',
      'content-length': FAVICON_ICO.length,
      'cache-control': 'public, max-age=86400',
      'x-content-type-options': 'nosniff',
    });
    res.end(req.method === 'HEAD' ? undefined : FAVICON_ICO);
  }
  return true;
}
