/**
 * The few DOM helpers both operator pages use (browser side, bundled into each page). Every text
 * goes in through textContent, never as HTML: viewer- and shop-supplied strings can never become
 * elements. Owns nothing else.
 */

/** A new element with an optional class and text. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  cls?: string,
  text?: string | number | null,
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

/** Sets `node`'s text when it changed, and hides it when empty. */
export function setText(node: HTMLElement, text: string): void {
  if (node.textContent !== text) node.textContent = text;
  node.hidden = !text;
}

/** The element with id `id` (the page's own markup: a missing one is a bug, thrown at once). */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const e = document.getElementById(id);
  if (!e) throw new Error(`#${id} is missing from the page`);
  return e as T;
}
