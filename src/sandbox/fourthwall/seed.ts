/**
 * The seeded demo shop of the Fourthwall sandbox: one shop ("Giftdrop Demo Shop"), five
 * products with stable uuid ids and slugs (t-shirt, mug, hoodie, sticker pack, and a gift card
 * that gifting refuses), a few donations, orders, a thank-you and a promotion. Product, variant
 * and order ids are fixed so tests and demos can name them; nothing here is random.
 * It builds plain data only; state and behaviour live elsewhere.
 */
import type { ContactInfo, Donation, Image, Order, Product, Promotion, Shop, ThankYou, Variant } from './types.js';
import { orderOffer, usd } from './shapes.js';

/** Stable ids of the seeded products (uuid product ids, as on Fourthwall). */
export const SEED_PRODUCT_IDS = {
  tshirt: '00aa4abd-5778-4199-8161-0b49b2f212e5',
  mug: '1b6e3f0c-2d7a-4c51-9e8b-3a4f5d6c7b81',
  hoodie: '2c7f4a1d-3e8b-4d62-8f9c-4b5a6e7d8c92',
  stickers: '3d8a5b2e-4f9c-4e73-9a0d-5c6b7f8e9da3',
  giftCard: '4e9b6c3f-5a0d-4f84-8b1e-6d7c8a9f0eb4',
} as const;

export const SEED_SHOP_ID = 'sh_c689d374-22ca-43d3-8d29-9ef0805cc4cb';

export interface SeedData {
  shop: Shop;
  contactInfo: ContactInfo;
  products: Product[];
  donations: Donation[];
  orders: Order[];
  thankYous: ThankYou[];
  promotions: Promotion[];
}

const SEED_TIME = '2026-01-01T12:00:00.000Z';

function image(shopUrl: string, id: string, width = 800, height = 800): Image {
  const url = `${shopUrl}/images/${id}.svg`;
  return { id, url, width, height, transformedUrl: `${url}?w=400` };
}

function variant(
  shopUrl: string,
  id: string,
  name: string,
  sku: string,
  price: number,
  attributes: Variant['attributes'],
  stock: Variant['stock'],
  img: Image,
): Variant {
  return {
    id,
    name,
    sku,
    unitPrice: usd(price),
    attributes,
    stock,
    weight: { value: 0.3, unit: 'kg' },
    dimensions: { length: 30, width: 20, height: 2, unit: 'cm' },
    images: [img],
  };
}

/** Builds the seed for a sandbox whose public site is `shopUrl` (e.g. `http://127.0.0.1:PORT/shop`). */
export function buildSeed(shopUrl: string): SeedData {
  const host = new URL(shopUrl).host;
  const shop: Shop = {
    id: SEED_SHOP_ID,
    name: 'Giftdrop Demo Shop',
    domain: host,
    publicDomain: host,
  };
  const img = {
    tshirt: image(shopUrl, 'img-tshirt-front'),
    mug: image(shopUrl, 'img-mug'),
    hoodie: image(shopUrl, 'img-hoodie'),
    stickers: image(shopUrl, 'img-stickers', 600, 600),
    giftCard: image(shopUrl, 'img-gift-card', 600, 400),
  };
  const product = (p: Omit<Product, 'createdAt' | 'updatedAt' | 'thumbnailImage'>): Product => ({
    ...p,
    thumbnailImage: p.images[0],
    createdAt: SEED_TIME,
    updatedAt: SEED_TIME,
  });
  const black = { name: 'Black', swatch: '#000000' };
  const products: Product[] = [
    product({
      id: SEED_PRODUCT_IDS.tshirt,
      name: 'Giftdrop T-Shirt',
      slug: 'giftdrop-t-shirt',
      description: 'A soft cotton t-shirt with the Giftdrop logo.',
      type: 'STANDARD',
      state: { type: 'AVAILABLE' },
      access: { type: 'PUBLIC' },
      images: [img.tshirt],
      variants: (['S', 'M', 'L'] as const).map((size, i) =>
        variant(
          shopUrl,
          `a1b2c3d4-0000-4000-8000-00000000000${i + 1}`,
          `Giftdrop T-Shirt - Black, ${size}`,
          `GD-TEE-BLK-${size}`,
          25,
          { description: `Black, ${size}`, color: black, size: { name: size } },
          { type: 'LIMITED', inStock: 20 - i * 5 },
          img.tshirt,
        ),
      ),
    }),
    product({
      id: SEED_PRODUCT_IDS.mug,
      name: 'Giftdrop Mug',
      slug: 'giftdrop-mug',
      description: 'A 11 oz ceramic mug.',
      type: 'STANDARD',
      state: { type: 'AVAILABLE' },
      access: { type: 'PUBLIC' },
      images: [img.mug],
      variants: [
        variant(
          shopUrl,
          'a1b2c3d4-0000-4000-8000-000000000011',
          'Giftdrop Mug - White',
          'GD-MUG-WHT',
          15,
          { description: 'White', color: { name: 'White', swatch: '#ffffff' } },
          { type: 'UNLIMITED' },
          img.mug,
        ),
      ],
    }),
    product({
      id: SEED_PRODUCT_IDS.hoodie,
      name: 'Giftdrop Hoodie',
      slug: 'giftdrop-hoodie',
      description: 'A warm hoodie for long streams.',
      type: 'STANDARD',
      state: { type: 'AVAILABLE' },
      access: { type: 'PUBLIC' },
      images: [img.hoodie],
      variants: (['M', 'L'] as const).map((size, i) =>
        variant(
          shopUrl,
          `a1b2c3d4-0000-4000-8000-00000000002${i + 1}`,
          `Giftdrop Hoodie - Black, ${size}`,
          `GD-HOOD-BLK-${size}`,
          45,
          { description: `Black, ${size}`, color: black, size: { name: size } },
          { type: 'LIMITED', inStock: 8 },
          img.hoodie,
        ),
      ),
    }),
    product({
      id: SEED_PRODUCT_IDS.stickers,
      name: 'Sticker Pack',
      slug: 'sticker-pack',
      description: 'Five vinyl stickers.',
      type: 'STANDARD',
      state: { type: 'AVAILABLE' },
      access: { type: 'PUBLIC' },
      images: [img.stickers],
      variants: [
        variant(
          shopUrl,
          'a1b2c3d4-0000-4000-8000-000000000031',
          'Sticker Pack',
          'GD-STICK-5',
          5,
          { description: 'Pack of 5' },
          { type: 'UNLIMITED' },
          img.stickers,
        ),
      ],
    }),
    product({
      id: SEED_PRODUCT_IDS.giftCard,
      name: 'Shop Gift Card',
      slug: 'shop-gift-card',
      description: 'A gift card for the shop.',
      type: 'GIFT_CARD',
      state: { type: 'AVAILABLE' },
      access: { type: 'HIDDEN' },
      images: [img.giftCard],
      variants: [
        variant(
          shopUrl,
          'a1b2c3d4-0000-4000-8000-000000000041',
          'Shop Gift Card - $20',
          'GD-GC-20',
          20,
          { description: '$20' },
          { type: 'UNLIMITED' },
          img.giftCard,
        ),
      ],
    }),
  ];

  const donations: Donation[] = [
    {
      id: 'don_Kpcjx4HIQ1e4bTIOjX9CsA',
      shopId: shop.id,
      status: 'COMPLETED',
      email: 'fan1@example.com',
      username: 'kind_viewer',
      message: 'Keep it up!',
      amounts: { total: usd(10) },
      createdAt: '2026-01-01T10:00:00.000Z',
      updatedAt: '2026-01-01T10:00:00.000Z',
    },
    {
      id: 'don_Lqdky5IJR2f5cUJPkY0DtB',
      shopId: shop.id,
      status: 'COMPLETED',
      email: 'fan2@example.com',
      username: 'night_owl',
      message: 'For the next giveaway',
      amounts: { total: usd(25) },
      createdAt: '2026-01-01T11:00:00.000Z',
      updatedAt: '2026-01-01T11:00:00.000Z',
    },
  ];

  const tee = products[0] as Product;
  const mug = products[1] as Product;
  const address = {
    name: 'Sam Sample',
    address1: '1 Example Street',
    city: 'Springfield',
    state: 'IL',
    country: 'US',
    zip: '62701',
  };
  const order = (
    id: string,
    friendlyId: string,
    status: Order['status'],
    email: string,
    username: string,
    offers: ReturnType<typeof orderOffer>[],
    createdAt: string,
  ): Order => {
    const subtotal = offers.reduce((s, o) => s + o.variant.price.value, 0);
    return {
      id,
      shopId: shop.id,
      friendlyId,
      checkoutId: `ch_${friendlyId}checkout00000`,
      status,
      email,
      emailMarketingOptIn: false,
      username,
      message: '',
      amounts: {
        subtotal: usd(subtotal),
        shipping: usd(5),
        tax: usd(0),
        donation: usd(0),
        discount: usd(0),
        giftCards: [],
        total: usd(subtotal + 5),
      },
      billing: { address },
      shipping: { address },
      offers,
      source: { type: 'ORDER' },
      createdAt,
      updatedAt: createdAt,
    };
  };
  const orders: Order[] = [
    order(
      '7f3e2d1c-0b9a-4877-8665-544332211001',
      'D3XZFWPP',
      'CONFIRMED',
      'buyer1@example.com',
      'merch_fan',
      [orderOffer(tee, tee.variants[1] as Variant, 2)],
      '2026-01-01T09:00:00.000Z',
    ),
    order(
      '7f3e2d1c-0b9a-4877-8665-544332211002',
      'K8MNQR2T',
      'SHIPPED',
      'buyer2@example.com',
      'coffee_lover',
      [orderOffer(mug, mug.variants[0] as Variant, 1)],
      '2025-12-20T09:00:00.000Z',
    ),
    order(
      '7f3e2d1c-0b9a-4877-8665-544332211003',
      'P4WXYZ7A',
      'CONFIRMED',
      'buyer1@example.com',
      'merch_fan',
      [orderOffer(tee, tee.variants[0] as Variant, 1), orderOffer(mug, mug.variants[0] as Variant, 1)],
      '2026-01-01T11:30:00.000Z',
    ),
  ];

  const thankYous: ThankYou[] = [
    {
      id: 'ty_EdJvIXu3SEiXe_QkPavHSA',
      mediaUrl: `${shopUrl}/thankyou/ty_EdJvIXu3SEiXe_QkPavHSA`,
      contribution: {
        type: 'DONATION',
        id: 'don_Kpcjx4HIQ1e4bTIOjX9CsA',
        shopId: shop.id,
        supporter: { email: 'fan1@example.com', username: 'kind_viewer', message: 'Keep it up!' },
      },
    },
  ];

  const promotions: Promotion[] = [
    {
      type: 'SHOP_SINGLE',
      id: 'prm_EdJvIXu3SEiXe_QkPavHSA',
      title: 'Stream launch',
      code: 'LAUNCH10',
      discount: { type: 'PERCENTAGE', percentage: 10, shippingOption: 'Excluded' },
      status: 'Live',
      requirements: {},
      usageCount: 3,
      limits: { maximumUsesNumber: 100, oneUsePerCustomer: true },
      appliesTo: { type: 'ENTIRE_ORDER' },
    },
  ];

  const contactInfo: ContactInfo = {
    shopEmail: 'shop@example.com',
    contactEmail: 'contact@example.com',
    transactionalEmail: 'orders@example.com',
    customerSupportEmail: 'support@example.com',
    phone: '+1 555 0100',
    shopName: shop.name,
    domain: shop.domain,
    location: {
      name: shop.name,
      address1: '1 Example Street',
      address2: '',
      city: 'Springfield',
      state: 'IL',
      zip: '62701',
      country: 'US',
    },
  };

  return { shop, contactInfo, products, donations, orders, thankYous, promotions };
}
