/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: SHA-256 (FIPS 180-4), used to key the compiled seccomp filter cache
 * and to checksum its entries.  Not for secrets: no constant-time claims. */
#ifndef KIST_SHA256_H
#define KIST_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define KIST_SHA256_LEN 32

struct kist_sha256
{
  uint32_t h[8];
  uint64_t total;          /* bytes hashed so far */
  uint8_t block[64];
  size_t used;             /* bytes in block */
};

void kist_sha256_init (struct kist_sha256 *s);
void kist_sha256_update (struct kist_sha256 *s, const void *data, size_t len);
void kist_sha256_final (struct kist_sha256 *s, uint8_t out[KIST_SHA256_LEN]);

/* One-shot digest of data. */
void kist_sha256 (const void *data, size_t len, uint8_t out[KIST_SHA256_LEN]);

/* Lower-case hex of a digest into hex (65 bytes: 64 digits and a NUL). */
void kist_sha256_hex (const uint8_t digest[KIST_SHA256_LEN], char hex[2 * KIST_SHA256_LEN + 1]);

#endif
