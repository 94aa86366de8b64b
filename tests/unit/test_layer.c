/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The layer registry (runtime/layer.c) against its documentation: the
 * "Layer vocabulary" and "Groups" sections of man/kist-report.5 list exactly
 * the registry's entries, each in its registry group. */
#define _GNU_SOURCE
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layer.h"
#include "util.h"
#include "unit.h"

#ifndef KIST_SRCDIR
#define KIST_SRCDIR "."
#endif

struct names
{
  char *v[512];
  enum kist_group g[512];
  size_t n;
};

static void
names_add (struct names *s, const char *name, enum kist_group g)
{
  for (size_t i = 0; i < s->n; i++)
    if (strcmp (s->v[i], name) == 0)
      return;
  ck_assert_uint_lt (s->n, KIST_ARRAY_SIZE (s->v));
  s->g[s->n] = g;
  s->v[s->n++] = xstrdup (name);
}

static bool
names_has (const struct names *s, const char *name)
{
  for (size_t i = 0; i < s->n; i++)
    if (strcmp (s->v[i], name) == 0)
      return true;
  return false;
}

static void
names_free (struct names *s)
{
  for (size_t i = 0; i < s->n; i++)
    free (s->v[i]);
  s->n = 0;
}

static void
collect (const char *name, enum kist_group g, void *arg)
{
  names_add (arg, name, g);
}

/* The names of one mdoc line: ".It Li a , b" or ".Li a ,"; the markup
 * `word\&. Ns Ar X` is the family "word.*". */
static void
parse_item (const char *line, struct names *out)
{
  _cleanup_free_ char *copy = xstrdup (line);
  char *p;
  while ((p = strstr (copy, "\\&. Ns Ar ")) != NULL)
    {
      /* "word\&. Ns Ar X rest" -> "word.* rest" */
      char *arg = p + strlen ("\\&. Ns Ar ");
      char *end = arg + strcspn (arg, " \t\n");
      memcpy (p, ".*", 2);
      memmove (p + 2, end, strlen (end) + 1);
    }
  char *save = NULL;
  for (char *w = strtok_r (copy, " \t\n", &save); w; w = strtok_r (NULL, " \t\n", &save))
    {
      if (strcmp (w, ".It") == 0 || strcmp (w, ".Li") == 0 || strcmp (w, "Li") == 0
          || strcmp (w, ",") == 0 || strcmp (w, ".") == 0)
        continue;
      names_add (out, w, KIST_GROUP_OTHER);
    }
}

/* The items at the top level of the "Layer vocabulary" section, and the
 * names of each group of the "Groups" section. */
static void
read_man (struct names *vocab, struct names *groups)
{
  _cleanup_free_ char *path = xasprintf ("%s/man/kist-report.5", KIST_SRCDIR);
  FILE *f = fopen (path, "re");
  ck_assert_msg (f != NULL, "cannot open %s", path);
  char line[4096];
  enum { NONE, GROUPS, VOCAB } sec = NONE;
  int depth = 0;
  enum kist_group cur = KIST_GROUP_OTHER;
  bool in_group = false;
  while (fgets (line, sizeof line, f))
    {
      if (strncmp (line, ".Ss ", 4) == 0 || strncmp (line, ".Sh ", 4) == 0)
        {
          sec = strcmp (line, ".Ss Groups\n") == 0            ? GROUPS
                : strcmp (line, ".Ss Layer vocabulary\n") == 0 ? VOCAB
                                                               : NONE;
          depth = 0;
          in_group = false;
          continue;
        }
      if (sec == NONE)
        continue;
      if (strncmp (line, ".Bl", 3) == 0)
        depth++;
      else if (strncmp (line, ".El", 3) == 0)
        depth--;
      else if (sec == VOCAB && depth == 1 && strncmp (line, ".It Li ", 7) == 0)
        parse_item (line, vocab);
      else if (sec == GROUPS && depth == 1 && strncmp (line, ".It ", 4) == 0)
        {
          in_group = true;
          cur = strncmp (line + 4, "confinement", 11) == 0 ? KIST_GROUP_CONFINEMENT
                : strncmp (line + 4, "limits", 6) == 0     ? KIST_GROUP_LIMITS
                                                            : KIST_GROUP_OTHER;
        }
      else if (sec == GROUPS && in_group && depth == 1 && strncmp (line, ".Li ", 4) == 0)
        {
          struct names one = { .n = 0 };
          parse_item (line, &one);
          for (size_t i = 0; i < one.n; i++)
            names_add (groups, one.v[i], cur);
          names_free (&one);
        }
    }
  fclose (f);
}

START_TEST (test_man_lists_the_registry)
{
  struct names reg = { .n = 0 }, vocab = { .n = 0 }, groups = { .n = 0 };
  kist_layer_vocabulary (collect, &reg);
  read_man (&vocab, &groups);
  ck_assert_uint_gt (reg.n, 40);
  ck_assert_uint_gt (vocab.n, 40);
  for (size_t i = 0; i < reg.n; i++)
    ck_assert_msg (names_has (&vocab, reg.v[i]),
                   "registry entry `%s` has no item in kist-report.5's Layer vocabulary", reg.v[i]);
  for (size_t i = 0; i < vocab.n; i++)
    ck_assert_msg (kist_layer_known (vocab.v[i]) || names_has (&reg, vocab.v[i]),
                   "kist-report.5 documents `%s`, which the registry does not record", vocab.v[i]);
  names_free (&reg);
  names_free (&vocab);
  names_free (&groups);
}
END_TEST

/* The group a name has in the man page's Groups section: its own line, else
 * its family's ("namespace.net" -> "namespace.*"); -1: not listed. */
static int
man_group (const struct names *groups, const char *name)
{
  for (size_t i = 0; i < groups->n; i++)
    if (strcmp (groups->v[i], name) == 0)
      return (int) groups->g[i];
  const char *dot = strchr (name, '.');
  if (dot && dot[1] != '*')
    {
      _cleanup_free_ char *fam = xasprintf ("%.*s.*", (int) (dot - name), name);
      for (size_t i = 0; i < groups->n; i++)
        if (strcmp (groups->v[i], fam) == 0)
          return (int) groups->g[i];
    }
  return -1;
}

START_TEST (test_man_groups_are_the_registry_groups)
{
  struct names reg = { .n = 0 }, vocab = { .n = 0 }, groups = { .n = 0 };
  kist_layer_vocabulary (collect, &reg);
  read_man (&vocab, &groups);
  ck_assert_uint_gt (groups.n, 20);
  static const char *const gname[] = { "confinement", "limits", "other" };
  for (size_t i = 0; i < reg.n; i++)
    {
      int g = man_group (&groups, reg.v[i]);
      ck_assert_msg (g >= 0, "kist-report.5's Groups section does not list `%s`", reg.v[i]);
      ck_assert_msg (g == (int) reg.g[i], "`%s`: kist-report.5 says group %s, the registry %s",
                     reg.v[i], gname[g], gname[reg.g[i]]);
    }
  /* And nothing is listed there that the registry does not know. */
  for (size_t i = 0; i < groups.n; i++)
    {
      const char *n = groups.v[i];
      size_t l = strlen (n);
      if (l > 2 && strcmp (n + l - 2, ".*") == 0)
        {
          bool any = names_has (&reg, n);
          for (size_t j = 0; j < reg.n && !any; j++)
            any = strncmp (reg.v[j], n, l - 1) == 0;
          ck_assert_msg (any, "kist-report.5's Groups lists `%s`, matching no registry entry", n);
        }
      else
        ck_assert_msg (kist_layer_known (n), "kist-report.5's Groups lists unknown `%s`", n);
    }
  names_free (&reg);
  names_free (&vocab);
  names_free (&groups);
}
END_TEST

static void
count_verifier (kist_layer_fn verify, const char *name, void *arg)
{
  (void) name;
  kist_layer_fn *seen = arg;
  size_t i = 0;
  while (seen[i] != NULL && seen[i] != verify)
    i++;
  ck_assert_msg (seen[i] == NULL, "the verifier of `%s` is run twice", name);
  seen[i] = verify;
}

/* The entries kist-report.5 says the parent verifies from outside (the
 * .Li list after "verified from outside:" in the description of
 * `applied`) are exactly the registry's entries with a verifier; each
 * verifier runs once. */
START_TEST (test_man_lists_the_verifiers)
{
  struct names reg = { .n = 0 }, man = { .n = 0 };
  for (size_t i = 0; i < kist_n_layers; i++)
    for (const struct kist_entry_def *e = kist_layers[i].entries; e && e->name; e++)
      if (e->verify != NULL)
        names_add (&reg, e->name, e->group);
  ck_assert_uint_ge (reg.n, 16);
  kist_layer_fn seen[64] = { NULL };
  kist_layer_verifiers (count_verifier, seen);
  ck_assert_ptr_nonnull (seen[8]); /* nine verifiers */

  _cleanup_free_ char *path = xasprintf ("%s/man/kist-report.5", KIST_SRCDIR);
  FILE *f = fopen (path, "re");
  ck_assert_msg (f != NULL, "cannot open %s", path);
  char line[4096];
  bool in = false;
  while (fgets (line, sizeof line, f))
    {
      if (strstr (line, "is verified from outside:") != NULL)
        in = true;
      else if (in && strstr (line, "record what they set") != NULL)
        break;
      else if (in && strncmp (line, ".Li ", 4) == 0)
        {
          struct names one = { .n = 0 };
          parse_item (line, &one);
          for (size_t i = 0; i < one.n; i++)
            if (strcmp (one.v[i], "(") != 0 && strcmp (one.v[i], ")") != 0)
              names_add (&man, one.v[i], KIST_GROUP_OTHER);
          names_free (&one);
        }
    }
  fclose (f);
  ck_assert_msg (man.n > 0, "kist-report.5: no \"is verified from outside:\" list");
  for (size_t i = 0; i < reg.n; i++)
    ck_assert_msg (names_has (&man, reg.v[i]),
                   "kist-report.5 does not say `%s` is verified from outside", reg.v[i]);
  for (size_t i = 0; i < man.n; i++)
    ck_assert_msg (names_has (&reg, man.v[i]),
                   "kist-report.5 says `%s` is verified from outside; the registry has no "
                   "verifier for it", man.v[i]);
  names_free (&reg);
  names_free (&man);
}
END_TEST

START_TEST (test_known_and_groups)
{
  ck_assert (kist_layer_known ("capabilities"));
  ck_assert (kist_layer_known ("rlimit.RLIMIT_NOFILE"));
  ck_assert (kist_layer_known ("cgroup"));
  ck_assert (kist_layer_known ("cgroup.memory.max"));
  ck_assert (kist_layer_known ("rlimit")); /* no rlimits: one entry */
  ck_assert (!kist_layer_known ("rlimits"));
  ck_assert (!kist_layer_known ("rlimit."));
  ck_assert (!kist_layer_known ("capability"));
  ck_assert (!kist_layer_known (""));
  ck_assert (!kist_layer_known (NULL));
  ck_assert_int_eq (kist_layer_group ("namespace.net"), KIST_GROUP_CONFINEMENT);
  ck_assert_int_eq (kist_layer_group ("cgroup.pids.max"), KIST_GROUP_LIMITS);
  ck_assert_int_eq (kist_layer_group ("cwd"), KIST_GROUP_OTHER);
  ck_assert_int_eq (kist_layer_group ("nonsense"), KIST_GROUP_OTHER);

  /* The index (layer.c entry_find) answers as a scan of the registry in
   * order does: the first exact entry, else the first family, for every
   * registered name, a family member, and near misses. */
  for (size_t i = 0; i < kist_n_layers; i++)
    for (const struct kist_entry_def *e = kist_layers[i].entries; e && e->name; e++)
      {
        char probe[3][128];
        size_t l = strlen (e->name);
        bool family = l >= 2 && e->name[l - 2] == '.' && e->name[l - 1] == '*';
        snprintf (probe[0], sizeof probe[0], "%.*s%s", (int) (family ? l - 1 : l), e->name,
                  family ? "member" : "");
        snprintf (probe[1], sizeof probe[1], "%sx", e->name);
        snprintf (probe[2], sizeof probe[2], "%.*s", (int) (l - 1), e->name);
        for (int k = 0; k < 3; k++)
          {
            const struct kist_entry_def *want = NULL, *fam = NULL;
            for (size_t a = 0; a < kist_n_layers && !want; a++)
              for (const struct kist_entry_def *f = kist_layers[a].entries; f && f->name; f++)
                {
                  size_t fl = strlen (f->name);
                  bool ff = fl >= 2 && f->name[fl - 2] == '.' && f->name[fl - 1] == '*';
                  if (!ff && strcmp (f->name, probe[k]) == 0)
                    {
                      want = f;
                      break;
                    }
                  if (ff && !fam && strncmp (probe[k], f->name, fl - 1) == 0
                      && probe[k][fl - 1] != '\0')
                    fam = f;
                }
            want = want ? want : fam;
            ck_assert_msg (kist_layer_known (probe[k]) == (want != NULL), "known `%s`", probe[k]);
            ck_assert_msg (kist_layer_group (probe[k]) == (want ? want->group : KIST_GROUP_OTHER),
                           "group of `%s`", probe[k]);
          }
      }
}
END_TEST

START_TEST (test_rows_are_well_formed)
{
  for (size_t i = 0; i < kist_n_layers; i++)
    {
      const struct kist_layer_def *d = &kist_layers[i];
      ck_assert_msg (d->phase < KIST_PHASE_COUNT, "row %zu: phase", i);
      ck_assert_msg (d->ops != 0, "row %zu: no operation runs it", i);
      ck_assert_msg (d->apply != NULL || d->by != NULL,
                     "row %zu: neither an entry point nor who records it", i);
      /* Rows are in phase order: the table reads top-down. */
      if (i > 0)
        ck_assert_msg (kist_layers[i - 1].phase <= d->phase, "row %zu: out of phase order", i);
    }
  /* The process slice is shared: every SETUP row exec runs, the init runs
   * too (except the exec-only initial affinity), in the same order. */
  size_t n_exec = 0;
  for (const struct kist_layer_def *d = NULL;
       (d = kist_layer_next (d, KIST_PHASE_SETUP, KIST_FOR_EXEC));)
    n_exec++;
  ck_assert_uint_ge (n_exec, 10);
}
END_TEST

int
main (void)
{
  Suite *s = suite_create ("layer");
  TCase *tc = tcase_create ("registry");
  tcase_add_test (tc, test_man_lists_the_registry);
  tcase_add_test (tc, test_man_groups_are_the_registry_groups);
  tcase_add_test (tc, test_man_lists_the_verifiers);
  tcase_add_test (tc, test_known_and_groups);
  tcase_add_test (tc, test_rows_are_well_formed);
  suite_add_tcase (s, tc);
  return kist_unit_run (s);
}
