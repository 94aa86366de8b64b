/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the seccomp vocabulary (seccomp_vocab.c) as the profile parser
 * (seccomp_profile.c) uses it; not for other modules (they use seccomp.h). */
#ifndef KIST_SECCOMP_VOCAB_H
#define KIST_SECCOMP_VOCAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------ vocabulary */

struct named
{
  const char *name;
  uint32_t value;
};

/* seccomp_vocab.c */

extern const struct named vocab_actions[];
extern const size_t vocab_n_actions;

extern const struct named vocab_operators[];
extern const size_t vocab_n_operators;

extern const struct named vocab_archs[];
extern const size_t vocab_n_archs;

/* The OCI flags kist knows (runtime-spec: linux.seccomp.flags). */
extern const struct named vocab_flag_names[];
extern const size_t vocab_n_flag_names;

/* Can a kernel of this native arch run code of arch a? (Unknown native:
 * assume it can, and keep every arch.) */
bool vocab_arch_possible (uint32_t native, uint32_t a);

const struct named *vocab_lookup (const struct named *t, size_t n, const char *name);

char *vocab_names_list (const struct named *t, size_t n);

bool vocab_takes_data (uint32_t base);

bool vocab_arch_from_any_name (const char *s, uint32_t *tok);

#endif
