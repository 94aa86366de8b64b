/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for runtime/mounts_opts.c: the plan of a mount, its idmap
 * (idmap, ridmap, uidMappings/gidMappings) rules. */
#define _GNU_SOURCE
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mounts_int.h"
#include "spec.h"
#include "util.h"
#include "unit.h"

/* The plan of the one mount of a config whose linux object is `linux_` and
 * whose mount is `mount`: NULL and *p on success, else the error message. */
static char *
plan_of (const char *linux_, const char *mount, struct plan *p)
{
  _cleanup_free_ char *doc = xasprintf ("{'ociVersion': '1.2.0', 'root': {'path': 'rootfs'}, "
                                        "'process': {'args': ['sh'], 'cwd': '/'}, "
                                        "'linux': %s, 'mounts': [%s]}",
                                        linux_, mount);
  for (char *c = doc; *c; c++)
    *c = *c == '\'' ? '"' : *c; /* ' for " in the documents */
  const char *json = doc;
  struct kist_spec *s = NULL;
  struct kist_error *err = NULL;
  ck_assert_msg (kist_spec_parse (json, strlen (json), &s, &err) == 0, "%s: %s", json,
                 err ? err->msg : "");
  char *msg = NULL;
  if (mnt_plan_build (s, &s->mounts[0], p, &err) < 0)
    msg = xstrdup (err ? err->msg : "(no message)");
  kist_error_free (err);
  /* The plan borrows the spec's mappings: copy what the tests look at. */
  static struct kist_idmap uids[4];
  if (msg == NULL && p->n_uids <= 4)
    {
      if (p->n_uids > 0)
        memcpy (uids, p->uids, p->n_uids * sizeof *uids);
      p->uids = uids;
      p->gids = NULL;
    }
  kist_spec_free (s);
  return msg;
}

#define NOUSERNS "{'namespaces': [{'type': 'mount'}]}"
#define USERNS                                                                                     \
  "{'namespaces': [{'type': 'mount'}, {'type': 'user'}], 'uidMappings': [{'containerID': 0, "    \
  "'hostID': 100000, 'size': 65536}], 'gidMappings': [{'containerID': 0, 'hostID': 100000, "     \
  "'size': 65536}]}"
#define MAP1 "[{'containerID': 0, 'hostID': 1000, 'size': 1}]"

START_TEST (test_idmap_ok)
{
  struct plan p = { 0 };
  char *msg = plan_of (NOUSERNS,
                       "{'destination': '/d', 'source': '/s', 'type': 'bind', 'options': "
                       "['rbind', 'ridmap'], 'uidMappings': " MAP1 ", 'gidMappings': " MAP1 "}",
                       &p);
  ck_assert_msg (msg == NULL, "%s", msg);
  ck_assert (p.idmap && p.idmap_rec && p.rbind && !p.idmap_implied);
  ck_assert_uint_eq (p.n_uids, 1);
  ck_assert_uint_eq (p.uids[0].host_id, 1000);
  mnt_plan_clear (&p);

  /* Mappings without the option: idmap (not recursive), as runc. */
  p = (struct plan){ 0 };
  msg = plan_of (NOUSERNS,
                 "{'destination': '/d', 'source': '/s', 'options': ['rbind'], 'uidMappings': " MAP1
                 ", 'gidMappings': " MAP1 "}",
                 &p);
  ck_assert_msg (msg == NULL, "%s", msg);
  ck_assert (p.idmap && !p.idmap_rec);
  mnt_plan_clear (&p);

  /* The option without mappings, in a user namespace: its mappings. */
  p = (struct plan){ 0 };
  msg = plan_of (USERNS, "{'destination': '/d', 'source': '/s', 'options': ['bind', 'idmap']}",
                 &p);
  ck_assert_msg (msg == NULL, "%s", msg);
  ck_assert (p.idmap && p.idmap_implied);
  ck_assert_uint_eq (p.uids[0].host_id, 100000);
  mnt_plan_clear (&p);

  /* No idmap at all. */
  p = (struct plan){ 0 };
  msg = plan_of (NOUSERNS, "{'destination': '/d', 'source': '/s', 'options': ['bind']}", &p);
  ck_assert_msg (msg == NULL, "%s", msg);
  ck_assert (!p.idmap);
  mnt_plan_clear (&p);
}
END_TEST

START_TEST (test_idmap_refused)
{
  static const struct
  {
    const char *linux_, *mount, *why;
  } cases[] = {
    { NOUSERNS, "{'destination': '/d', 'source': '/s', 'options': ['bind', 'idmap']}",
      "option `idmap` without uidMappings and gidMappings" },
    { NOUSERNS, "{'destination': '/d', 'source': '/s', 'options': ['rbind', 'ridmap']}",
      "option `ridmap` without uidMappings and gidMappings" },
    { NOUSERNS, "{'destination': '/d', 'source': '/s', 'options': ['bind'], 'uidMappings': " MAP1 "}",
      "uidMappings given without gidMappings" },
    { USERNS, "{'destination': '/d', 'source': '/s', 'options': ['bind'], 'gidMappings': " MAP1 "}",
      "gidMappings given without uidMappings" },
    { NOUSERNS,
      "{'destination': '/d', 'type': 'tmpfs', 'source': 'tmpfs', 'options': ['idmap'], "
      "'uidMappings': " MAP1 ", 'gidMappings': " MAP1 "}",
      "an idmapped mount is a bind mount only" },
    { NOUSERNS,
      "{'destination': '/d', 'type': 'tmpfs', 'source': 'tmpfs', 'uidMappings': " MAP1
      ", 'gidMappings': " MAP1 "}",
      "uidMappings/gidMappings: an idmapped mount is a bind mount only" },
    { NOUSERNS,
      "{'destination': '/d', 'source': '/s', 'options': ['bind'], 'uidMappings': [{'containerID': "
      "0, 'hostID': 1000, 'size': 10}, {'containerID': 9, 'hostID': 5000, 'size': 1}], "
      "'gidMappings': " MAP1 "}",
      "uidMappings[0] and uidMappings[1]: their containerID ranges overlap" },
    { NOUSERNS,
      "{'destination': '/d', 'source': '/s', 'options': ['bind'], 'uidMappings': " MAP1
      ", 'gidMappings': [{'containerID': 0, 'hostID': 1000, 'size': 10}, {'containerID': 10, "
      "'hostID': 1005, 'size': 1}]}",
      "gidMappings[0] and gidMappings[1]: their hostID ranges overlap" },
    { NOUSERNS,
      "{'destination': '/d', 'source': '/s', 'options': ['bind'], 'uidMappings': [{'containerID': "
      "4294967295, 'hostID': 0, 'size': 1}], 'gidMappings': " MAP1 "}",
      "uidMappings[0]: 1 ids from containerID 4294967295" },
  };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (cases); i++)
    {
      struct plan p = { 0 };
      char *msg = plan_of (cases[i].linux_, cases[i].mount, &p);
      ck_assert_msg (msg && strstr (msg, cases[i].why), "case %zu: %s", i, msg ? msg : "(accepted)");
      free (msg);
      mnt_plan_clear (&p);
    }
  /* The last id of a range may be 4294967294, not 4294967295. */
  struct plan p = { 0 };
  char *msg = plan_of (NOUSERNS,
                       "{'destination': '/d', 'source': '/s', 'options': ['bind'], 'uidMappings': "
                       "[{'containerID': 4294967294, 'hostID': 0, 'size': 1}], 'gidMappings': " MAP1
                       "}",
                       &p);
  ck_assert_msg (msg == NULL, "%s", msg);
  mnt_plan_clear (&p);
}
END_TEST

int
main (void)
{
  Suite *s = suite_create ("mounts");
  TCase *tc = tcase_create ("plan");
  tcase_add_test (tc, test_idmap_ok);
  tcase_add_test (tc, test_idmap_refused);
  suite_add_tcase (s, tc);
  return kist_unit_run (s);
}
