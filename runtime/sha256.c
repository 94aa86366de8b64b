/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: SHA-256 (FIPS 180-4 section 6.2), portable C, rounds unrolled by 8. */
#define _GNU_SOURCE
#include <string.h>

#include "sha256.h"

static const uint32_t K[64] = {
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t
ror (uint32_t x, unsigned n)
{
  return (x >> n) | (x << (32 - n));
}

/* The 64 rounds, 8 at a time with the working variables renamed instead of
 * moved, and the message schedule in a 16-word ring (FIPS 180-4 6.2.2 as
 * is; about half the instructions of the one-round loop). */
#define S0(x) (ror (x, 2) ^ ror (x, 13) ^ ror (x, 22))
#define S1(x) (ror (x, 6) ^ ror (x, 11) ^ ror (x, 25))
#define s0(x) (ror (x, 7) ^ ror (x, 18) ^ ((x) >> 3))
#define s1(x) (ror (x, 17) ^ ror (x, 19) ^ ((x) >> 10))
#define CH(x, y, z) ((z) ^ ((x) & ((y) ^ (z))))
#define MAJ(x, y, z) (((x) & (y)) | ((z) & ((x) | (y))))
/* W(i) for i >= 16, computed into the ring. */
#define W(i) (w[(i) & 15] += s1 (w[((i) - 2) & 15]) + w[((i) - 7) & 15] + s0 (w[((i) - 15) & 15]))
#define ROUND(a, b, c, d, e, f, g, h, i, wi)                                                   \
  do                                                                                         \
    {                                                                                        \
      uint32_t t1 = (h) + S1 (e) + CH (e, f, g) + K[i] + (wi);                               \
      (d) += t1;                                                                             \
      (h) = t1 + S0 (a) + MAJ (a, b, c);                                                     \
    }                                                                                        \
  while (0)
#define EIGHT(i, WF)                                                                         \
  do                                                                                         \
    {                                                                                        \
      ROUND (a, b, c, d, e, f, g, k, (i) + 0, WF ((i) + 0));                                 \
      ROUND (k, a, b, c, d, e, f, g, (i) + 1, WF ((i) + 1));                                 \
      ROUND (g, k, a, b, c, d, e, f, (i) + 2, WF ((i) + 2));                                 \
      ROUND (f, g, k, a, b, c, d, e, (i) + 3, WF ((i) + 3));                                 \
      ROUND (e, f, g, k, a, b, c, d, (i) + 4, WF ((i) + 4));                                 \
      ROUND (d, e, f, g, k, a, b, c, (i) + 5, WF ((i) + 5));                                 \
      ROUND (c, d, e, f, g, k, a, b, (i) + 6, WF ((i) + 6));                                 \
      ROUND (b, c, d, e, f, g, k, a, (i) + 7, WF ((i) + 7));                                 \
    }                                                                                        \
  while (0)
#define W0(i) (w[i])

static void
compress (uint32_t h[8], const uint8_t p[64])
{
  uint32_t w[16];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t) p[4 * i] << 24 | (uint32_t) p[4 * i + 1] << 16 | (uint32_t) p[4 * i + 2] << 8
           | (uint32_t) p[4 * i + 3];
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
  EIGHT (0, W0);
  EIGHT (8, W0);
  EIGHT (16, W);
  EIGHT (24, W);
  EIGHT (32, W);
  EIGHT (40, W);
  EIGHT (48, W);
  EIGHT (56, W);
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
  h[5] += f;
  h[6] += g;
  h[7] += k;
}

void
kist_sha256_init (struct kist_sha256 *s)
{
  static const uint32_t iv[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                  0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
  memcpy (s->h, iv, sizeof iv);
  s->total = 0;
  s->used = 0;
}

void
kist_sha256_update (struct kist_sha256 *s, const void *data, size_t len)
{
  const uint8_t *p = data;
  s->total += len;
  if (s->used)
    {
      size_t take = 64 - s->used < len ? 64 - s->used : len;
      memcpy (s->block + s->used, p, take);
      s->used += take;
      p += take;
      len -= take;
      if (s->used < 64)
        return;
      compress (s->h, s->block);
      s->used = 0;
    }
  for (; len >= 64; p += 64, len -= 64)
    compress (s->h, p);
  memcpy (s->block, p, len);
  s->used = len;
}

void
kist_sha256_final (struct kist_sha256 *s, uint8_t out[KIST_SHA256_LEN])
{
  uint64_t bits = s->total * 8;
  s->block[s->used++] = 0x80;
  if (s->used > 56)
    {
      memset (s->block + s->used, 0, 64 - s->used);
      compress (s->h, s->block);
      s->used = 0;
    }
  memset (s->block + s->used, 0, 56 - s->used);
  for (int i = 0; i < 8; i++)
    s->block[56 + i] = (uint8_t) (bits >> (56 - 8 * i));
  compress (s->h, s->block);
  for (int i = 0; i < 8; i++)
    {
      out[4 * i] = (uint8_t) (s->h[i] >> 24);
      out[4 * i + 1] = (uint8_t) (s->h[i] >> 16);
      out[4 * i + 2] = (uint8_t) (s->h[i] >> 8);
      out[4 * i + 3] = (uint8_t) s->h[i];
    }
  memset (s, 0, sizeof *s);
}

void
kist_sha256 (const void *data, size_t len, uint8_t out[KIST_SHA256_LEN])
{
  struct kist_sha256 s;
  kist_sha256_init (&s);
  kist_sha256_update (&s, data, len);
  kist_sha256_final (&s, out);
}

void
kist_sha256_hex (const uint8_t digest[KIST_SHA256_LEN], char hex[2 * KIST_SHA256_LEN + 1])
{
  static const char digits[] = "0123456789abcdef";
  for (int i = 0; i < KIST_SHA256_LEN; i++)
    {
      hex[2 * i] = digits[digest[i] >> 4];
      hex[2 * i + 1] = digits[digest[i] & 15];
    }
  hex[2 * KIST_SHA256_LEN] = '\0';
}
