/**
 * The one HTML escape of the server-rendered pages (the claim page, the sandbox's login and product
 * feed): every viewer- or shop-supplied string goes through `escapeHtml` before it is part of HTML
 * or XML (text or a quoted attribute). The browser pages escape in their own client code.
 */

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** `s` with & < > " ' as entities: safe as HTML/XML text and inside a quoted attribute. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}
