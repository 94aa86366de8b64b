/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: seccomp profile files (the OCI linux.seccomp format:
 * kist_seccomp_profile_parse_json), their canonical form and cache key, and
 * for small profiles the compiled program (kist_seccomp_compile: libseccomp
 * plus kist's ENOSYS prefix), checked for jumps inside the program.  The
 * same document parsed as an inline linux.seccomp (kist_seccomp_profile_parse_at)
 * must give the same result, its errors under "config.json: linux.seccomp".
 *
 * The environment is fixed so that a run is reproducible: kernel 6.1.0, the
 * native arch, and a bounding set that depends on the input's length (empty
 * for an even length, a few capabilities for an odd one) so that both sides
 * of includes/excludes caps are reached. */
#include <linux/filter.h>

#include "fuzz.h"
#include "json.h"
#include "seccomp.h"
#include "sha256.h"
#include "spec_json.h"

/* Compiling costs milliseconds for a full profile; keep the fuzzer fast. */
#define COMPILE_MAX_RULES 48

static char *const caps[] = { "CAP_SYS_ADMIN", "CAP_NET_ADMIN", "CAP_SYS_PTRACE", "CAP_BPF",
                              NULL };

static void
check_program (const struct sock_filter *f, size_t n)
{
  FUZZ_ASSERT (n > 0 && n <= KIST_SECCOMP_MAX_INSNS + 64);
  for (size_t i = 0; i < n; i++)
    {
      uint16_t code = f[i].code;
      if (BPF_CLASS (code) != BPF_JMP)
        continue;
      if (BPF_OP (code) == BPF_JA)
        FUZZ_ASSERT (i + 1 + (size_t) f[i].k < n);
      else
        FUZZ_ASSERT (i + 1 + f[i].jt < n && i + 1 + f[i].jf < n);
    }
  FUZZ_ASSERT (BPF_CLASS (f[n - 1].code) == BPF_RET);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size > KIST_SECCOMP_PROFILE_MAX)
    return 0;
  char *json = fuzz_exact (data, size);
  struct kist_seccomp_env env = { .bounding = size % 2 ? caps : NULL, .kernel = "6.1.0" };
  struct kist_seccomp_profile *p = NULL;
  struct kist_error *e = NULL;
  int r = kist_seccomp_profile_parse_json (json, size, "seccomp profile `fuzz`: ", &env, &p, &e);
  /* The same document as an inline linux.seccomp (kist_seccomp_choose's
   * way): the same result, errors under the config's path, the path given
   * back as it was. */
  yajl_val tree = NULL;
  struct kist_error *je = NULL;
  if (kist_json_parse (json, size, "", &tree, &je) == 0)
    {
      struct jpath jp = { .doc = "config.json: " };
      spec_jp_key (&jp, "linux");
      spec_jp_key (&jp, "seccomp");
      struct kist_seccomp_profile *q = NULL;
      struct kist_error *qe = NULL;
      int rq = kist_seccomp_profile_parse_at (&jp, tree, &env, &q, &qe);
      FUZZ_ASSERT ((rq == 0) == (r == 0));
      if (rq == 0)
        {
          FUZZ_ASSERT (jp.len == strlen ("linux.seccomp") && strcmp (jp.buf, "linux.seccomp") == 0);
          size_t la = 0, lb = 0;
          char *a = kist_seccomp_canonical (p, &la), *b = kist_seccomp_canonical (q, &lb);
          FUZZ_ASSERT (la == lb && memcmp (a, b, la) == 0);
          free (a);
          free (b);
          kist_seccomp_profile_free (q);
        }
      else
        {
          FUZZ_ASSERT (q == NULL && qe != NULL);
          FUZZ_ASSERT (strncmp (qe->msg, "config.json: linux.seccomp", 26) == 0);
          FUZZ_ASSERT (strncmp (e->msg, "seccomp profile `fuzz`: ", 24) == 0);
        }
      fuzz_error_check_free (&qe);
      free (jp.buf);
      kist_json_tree_free (tree);
    }
  fuzz_error_check_free (&je);
  free (json);
  if (r < 0)
    {
      FUZZ_ASSERT (p == NULL && e != NULL);
      fuzz_error_check_free (&e);
      return 0;
    }
  FUZZ_ASSERT (p != NULL && e == NULL);
  for (size_t i = 0; i < p->n_rules; i++)
    {
      FUZZ_ASSERT (p->rules[i].name != NULL);
      FUZZ_ASSERT (p->rules[i].n_args <= 6);
      for (unsigned a = 0; a < p->rules[i].n_args; a++)
        FUZZ_ASSERT (p->rules[i].args[a].index <= 5);
    }
  size_t len = 0;
  char *canon = kist_seccomp_canonical (p, &len);
  FUZZ_ASSERT (canon != NULL && len == strlen (canon));
  free (canon);
  uint8_t key[KIST_SHA256_LEN];
  kist_seccomp_key (p, key);
  char buf[32];
  FUZZ_ASSERT (kist_seccomp_action_str (p->default_action, buf) != NULL);

  if (p->n_rules <= COMPILE_MAX_RULES)
    {
      struct sock_filter *insns = NULL;
      size_t n = 0;
      if (kist_seccomp_compile (p, &insns, &n, &e) == 0)
        {
          check_program (insns, n);
          free (insns);
        }
      fuzz_error_check_free (&e);
    }
  kist_seccomp_profile_free (p);
  return 0;
}
