/**
 * The sandbox shop's product pictures: small drawn SVGs that look like what they are (a black
 * tee and hoodie with the giftdrop box on the chest, a white mug, a sticker sheet, a gift card),
 * so the overlay, the dashboard's product picker and the demo show products, not labels.
 *
 * Contract: `productArtSvg(imageId)` returns a complete 400x400 SVG document for an image id of
 * the sandbox's seed (`img-tshirt-front`, `img-hoodie`, `img-mug`, `img-stickers`,
 * `img-gift-card`); an id it does not know (a product created through the API) gets a wrapped gift
 * box. Pure; static markup only (no script, no external reference, no text from the request).
 */

/** The giftdrop box (a present with a bow), centred on (x, y), `s` wide. */
function giftBox(x: number, y: number, s: number): string {
  const h = s * 0.8;
  const left = x - s / 2;
  const top = y - h / 2 + s * 0.12;
  return `<g>
  <rect x="${left}" y="${top}" width="${s}" height="${h * 0.78}" rx="${s * 0.08}" fill="#7c3aed"/>
  <rect x="${left - s * 0.06}" y="${top - s * 0.12}" width="${s * 1.12}" height="${s * 0.24}" rx="${s * 0.06}" fill="#8b5cf6"/>
  <rect x="${x - s * 0.09}" y="${top - s * 0.12}" width="${s * 0.18}" height="${h * 0.78 + s * 0.12}" fill="#facc15"/>
  <path d="M${x} ${top - s * 0.12} C${x - s * 0.42} ${top - s * 0.5} ${x - s * 0.5} ${top - s * 0.02} ${x} ${top - s * 0.12} Z" fill="#fde047"/>
  <path d="M${x} ${top - s * 0.12} C${x + s * 0.42} ${top - s * 0.5} ${x + s * 0.5} ${top - s * 0.02} ${x} ${top - s * 0.12} Z" fill="#facc15"/>
</g>`;
}

function svg(body: string, defs = ''): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="400" height="400" viewBox="0 0 400 400"><defs>${defs}</defs>${body}</svg>`;
}

const SHADE = `<linearGradient id="cloth" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#34343c"/><stop offset="1" stop-color="#1c1c22"/></linearGradient>`;

const TEE = svg(
  `<ellipse cx="200" cy="362" rx="120" ry="12" fill="#000" opacity=".18"/>
<path d="M122 62 L168 44 Q200 70 232 44 L278 62 L358 118 L322 178 L286 156 L286 344 Q200 358 114 344 L114 156 L78 178 L42 118 Z" fill="url(#cloth)"/>
<path d="M168 44 Q200 70 232 44 Q228 58 200 64 Q172 58 168 44 Z" fill="#0e0e12"/>
<path d="M114 156 L114 174 M286 156 L286 174" stroke="#0e0e12" stroke-width="3"/>
${giftBox(200, 180, 64)}`,
  SHADE,
);

const HOODIE = svg(
  `<ellipse cx="200" cy="364" rx="130" ry="12" fill="#000" opacity=".18"/>
<path d="M112 118 L150 92 L250 92 L288 118 L352 300 L318 316 L284 204 L284 350 Q200 362 116 350 L116 204 L82 316 L48 300 Z" fill="url(#cloth)"/>
<path d="M148 96 Q200 18 252 96 Q200 124 148 96 Z" fill="#2a2a31"/>
<ellipse cx="200" cy="92" rx="32" ry="15" fill="#0e0e12"/>
<path d="M188 104 L184 156 M212 104 L216 156" stroke="#e4e4e7" stroke-width="4" stroke-linecap="round"/>
<circle cx="184" cy="160" r="5" fill="#e4e4e7"/><circle cx="216" cy="160" r="5" fill="#e4e4e7"/>
<path d="M146 262 L254 262 L270 330 L130 330 Z" fill="#2c2c34"/>
<path d="M146 262 L130 330 M254 262 L270 330" stroke="#0e0e12" stroke-width="3"/>
${giftBox(200, 206, 52)}`,
  SHADE,
);

const MUG = svg(
  `<ellipse cx="190" cy="334" rx="118" ry="14" fill="#000" opacity=".18"/>
<path d="M150 70 C140 52 166 44 156 26 M200 70 C190 52 216 44 206 26 M250 70 C240 52 266 44 256 26" stroke="#a1a1aa" stroke-width="6" fill="none" stroke-linecap="round" opacity=".7"/>
<path d="M270 148 C344 148 344 276 270 276" stroke="#d4d4d8" stroke-width="26" fill="none" stroke-linecap="round"/>
<path d="M270 148 C344 148 344 276 270 276" stroke="#f4f4f5" stroke-width="14" fill="none" stroke-linecap="round"/>
<path d="M104 100 L276 100 L268 306 Q190 330 112 306 Z" fill="url(#porcelain)"/>
<ellipse cx="190" cy="100" rx="86" ry="16" fill="#f4f4f5" stroke="#d4d4d8" stroke-width="3"/>
<ellipse cx="190" cy="102" rx="74" ry="10" fill="#3f2a1c"/>
${giftBox(188, 206, 70)}`,
  `<linearGradient id="porcelain" x1="0" y1="0" x2="1" y2="0"><stop offset="0" stop-color="#e4e4e7"/><stop offset=".35" stop-color="#ffffff"/><stop offset="1" stop-color="#d4d4d8"/></linearGradient>`,
);

const STICKERS = svg(
  `<rect x="58" y="48" width="284" height="304" rx="18" fill="#f4f4f5" stroke="#d4d4d8" stroke-width="3" transform="rotate(-4 200 200)"/>
<g transform="rotate(-4 200 200)">
  <circle cx="138" cy="128" r="54" fill="#fff"/><circle cx="138" cy="128" r="46" fill="#7c3aed"/>
  ${giftBox(138, 124, 44)}
  <path d="M262 78 L276 112 L312 114 L284 136 L294 172 L262 152 L230 172 L240 136 L212 114 L248 112 Z" fill="#fff"/>
  <path d="M262 88 L273 115 L302 117 L280 134 L288 163 L262 147 L236 163 L244 134 L222 117 L251 115 Z" fill="#facc15"/>
  <rect x="92" y="210" width="112" height="112" rx="28" fill="#fff"/><rect x="100" y="218" width="96" height="96" rx="22" fill="#ec4899"/>
  <path d="M148 296 C108 270 110 236 132 232 C142 230 148 238 148 246 C148 238 154 230 164 232 C186 236 188 270 148 296 Z" fill="#fff"/>
  <circle cx="272" cy="266" r="50" fill="#fff"/><circle cx="272" cy="266" r="42" fill="#22c55e"/>
  <path d="M250 268 L266 284 L296 250" stroke="#fff" stroke-width="10" fill="none" stroke-linecap="round" stroke-linejoin="round"/>
</g>`,
);

const GIFT_CARD = svg(
  `<ellipse cx="200" cy="312" rx="150" ry="12" fill="#000" opacity=".15"/>
<g transform="rotate(-6 200 200)">
  <rect x="52" y="104" width="296" height="188" rx="18" fill="url(#card)"/>
  <rect x="52" y="176" width="296" height="26" fill="#facc15"/>
  <rect x="238" y="104" width="26" height="188" fill="#facc15"/>
  <path d="M251 189 C214 150 200 196 251 189 Z M251 189 C288 150 302 196 251 189 Z" fill="#fde047"/>
  <rect x="78" y="236" width="96" height="12" rx="6" fill="#fff" opacity=".7"/>
  <rect x="78" y="256" width="60" height="12" rx="6" fill="#fff" opacity=".45"/>
  <circle cx="96" cy="136" r="14" fill="#fff" opacity=".85"/>
</g>`,
  `<linearGradient id="card" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#8b5cf6"/><stop offset="1" stop-color="#5b21b6"/></linearGradient>`,
);

const GIFT = svg(`<ellipse cx="200" cy="330" rx="120" ry="12" fill="#000" opacity=".15"/>${giftBox(200, 214, 200)}`);

/** The picture for an image id (see the module contract). */
export function productArtSvg(imageId: string): string {
  const id = imageId.toLowerCase();
  if (/hoodie/.test(id)) return HOODIE;
  if (/t-?shirt|tee/.test(id)) return TEE;
  if (/mug|cup/.test(id)) return MUG;
  if (/sticker/.test(id)) return STICKERS;
  if (/card/.test(id)) return GIFT_CARD;
  return GIFT;
}
