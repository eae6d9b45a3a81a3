// A strong ETag for generated text: FNV-1a 64 over its UTF-8 bytes, pure JS and synchronous.

const FNV_PRIME_LOW = 0x1b3; // FNV-1a 64 prime = 2^40 + 0x1b3

/**
 * FNV-1a 64-bit hash of bytes, as 16 lower-case hex digits. Not cryptographic: it only has to tell
 * one rendering from another, and being synchronous keeps rendering synchronous.
 * @example
 * fnv1a64(new TextEncoder().encode('a')); // "af63dc4c8601ec8c"
 */
export function fnv1a64(bytes: Uint8Array): string {
  // Four 16-bit limbs, little end first, so every product stays an exact small integer.
  let h0 = 0x2325;
  let h1 = 0x8422;
  let h2 = 0x9ce4;
  let h3 = 0xcbf2;
  for (let i = 0; i < bytes.length; i++) {
    h0 ^= bytes[i]!;
    const t0 = h0 * FNV_PRIME_LOW;
    const t1 = h1 * FNV_PRIME_LOW + (t0 >>> 16);
    // The 2^40 term shifts the low limbs 40 bits up: limb 0 into limb 2 and limb 1 into limb 3, by 8 bits.
    const t2 = h2 * FNV_PRIME_LOW + (h0 << 8) + (t1 >>> 16);
    const t3 = h3 * FNV_PRIME_LOW + (h1 << 8) + (t2 >>> 16);
    h0 = t0 & 0xffff;
    h1 = t1 & 0xffff;
    h2 = t2 & 0xffff;
    h3 = t3 & 0xffff;
  }
  const hex = (limb: number) => limb.toString(16).padStart(4, '0');
  return hex(h3) + hex(h2) + hex(h1) + hex(h0);
}

/** A strong, quoted ETag (RFC 9110 §8.8.3) for these bytes. */
export function strongEtag(bytes: Uint8Array): string {
  return `"${fnv1a64(bytes)}"`;
}
