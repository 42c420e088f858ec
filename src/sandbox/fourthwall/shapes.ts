/**
 * Small wire-shape builders the sandbox's seed data and its gifting engine share: money, the
 * offer summary of a product, and an order line for one variant.
 */
import type { Money, OfferSummary, Product, Variant } from './types.js';

export function usd(value: number): Money {
  return { value: Math.round(value * 100) / 100, currency: 'USD' };
}

export function offerSummary(p: Product): OfferSummary {
  return {
    id: p.id,
    name: p.name,
    slug: p.slug,
    description: p.description,
    ...(p.images[0] ? { primaryImage: p.images[0] } : {}),
  };
}

/** An order's offer entry: the product summary with `quantity` of variant `v`. */
export function orderOffer(p: Product, v: Variant, quantity: number) {
  return {
    ...offerSummary(p),
    variant: {
      id: v.id,
      name: v.name,
      sku: v.sku,
      unitPrice: v.unitPrice,
      attributes: v.attributes,
      weight: v.weight,
      dimensions: v.dimensions,
      quantity,
      price: usd(v.unitPrice.value * quantity),
    },
  };
}
