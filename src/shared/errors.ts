/**
 * The base of every error giftdrop raises on purpose. Each carries a stable machine `code`
 * and, where one exists, the `cause` it wraps. Layers translate errors where they meet
 * (an HTTP 404 from Fourthwall becomes a domain "not found"); nothing here knows any layer.
 */
export class GiftdropError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}
