/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: ids and paths.
 *   - kist_id_validate against an independent model of the rule (1..1024
 *     chars of [A-Za-z0-9_.+-], not "." or "..");
 *   - kist_cgroup_resolve_path: the input as linux.cgroupsPath, and (for a
 *     valid id) the default scope kist/<id>; a resolved path must have no
 *     leading '/', no empty, "." or ".." component and components of at
 *     most 255 bytes;
 *   - the value parsers for limits given by engines: kist_parse_size (both
 *     syntaxes) and kist_cgroup_cpulist_equal (cpuset lists, the input
 *     split at its first newline). */
#define _GNU_SOURCE
#include <stdbool.h>

#include "cgroup.h"
#include "fuzz.h"
#include "state.h"
#include "util.h"

static bool
model_id_ok (const char *id)
{
  size_t n = strlen (id);
  if (n == 0 || n > KIST_ID_MAX || strcmp (id, ".") == 0 || strcmp (id, "..") == 0)
    return false;
  for (size_t i = 0; i < n; i++)
    {
      char c = id[i];
      if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
            || c == '_' || c == '.' || c == '+' || c == '-'))
        return false;
    }
  return true;
}

static void
check_rel (const char *rel)
{
  FUZZ_ASSERT (rel != NULL && rel[0] != '/');
  const char *c = rel;
  while (*c)
    {
      const char *e = strchrnul (c, '/');
      size_t n = (size_t) (e - c);
      FUZZ_ASSERT (n > 0 && n <= 255);
      FUZZ_ASSERT (!(n == 1 && c[0] == '.') && !(n == 2 && c[0] == '.' && c[1] == '.'));
      c = *e ? e + 1 : e;
      FUZZ_ASSERT (!(*e && *c == '\0'));
    }
}

static void
resolve (const char *cgroups_path, const char *own, const char *id, bool must_succeed)
{
  char *rel = NULL;
  struct kist_error *e = NULL;
  if (kist_cgroup_resolve_path (cgroups_path, own, id, &rel, &e) == 0)
    {
      check_rel (rel);
      free (rel);
    }
  else
    {
      FUZZ_ASSERT (!must_succeed);
      FUZZ_ASSERT (rel == NULL);
    }
  fuzz_error_check_free (&e);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size > 8192)
    return 0;
  char *s = fuzz_cstr (data, size);
  struct kist_error *e = NULL;
  bool ok = kist_id_validate (s, &e) == 0;
  FUZZ_ASSERT (ok == model_id_ok (s));
  FUZZ_ASSERT (ok == (e == NULL));
  fuzz_error_check_free (&e);

  resolve (s, "user.slice/user-1000.slice/session-2.scope", "c1", false);
  resolve (s, "", "c1", false);
  if (ok)
    resolve (NULL, "/system.slice", s, true);

  uint64_t v;
  (void) kist_parse_size (s, false, &v);
  (void) kist_parse_size (s, true, &v);

  char *nl = strchr (s, '\n');
  if (nl)
    {
      *nl = '\0';
      (void) kist_cgroup_cpulist_equal (s, nl + 1);
    }
  else
    (void) kist_cgroup_cpulist_equal (s, s);
  free (s);
  return 0;
}
