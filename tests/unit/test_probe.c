/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist sandbox --probe's pure parts (runtime/sandbox_probe.c): the rows,
 * the exit status, the summary under a policy, the JSON and the table, the
 * hint split and the controller lists. */
#define _GNU_SOURCE
#include <check.h>
#include <string.h>

#include "json.h"
#include "sandbox_probe.h"
#include "util.h"
#include "unit.h"

/* The probe every test starts from (the checked fixture's). */
static struct kist_probe P;

static void
sample (struct kist_probe *p, const char *policy)
{
  memset (p, 0, sizeof *p);
  p->uid = 65534;
  p->gid = 65534;
  p->user = xstrdup ("nobody");
  p->policy = policy;
  kist_probe_add (p, "namespace.user", true, true, NULL, "can be created");
  kist_probe_add (p, "namespace.net", false, true, NULL, "--net host");
  kist_probe_add (p, "idmap.uid", true, true, "add a range", "size 1");
  p->rows[p->n - 1].degraded = true;
  kist_probe_add (p, "cgroup.memory.max", true, false, "a host with the controller",
                  "memory controller not available (%s)", "hugetlb");
}

static void
setup (void)
{
  sample (&P, NULL);
}

static void
teardown (void)
{
  kist_probe_clear (&P);
}

START_TEST (test_can_and_status)
{
  struct kist_probe p = P;
  ck_assert_str_eq (kist_probe_can (&p.rows[0]), "yes");
  ck_assert_str_eq (kist_probe_can (&p.rows[1]), "-");
  ck_assert_str_eq (kist_probe_can (&p.rows[2]), "degraded");
  ck_assert_str_eq (kist_probe_can (&p.rows[3]), "no");
  ck_assert_str_eq (p.rows[3].text, "memory controller not available (hugetlb)");
  ck_assert_int_eq (kist_probe_status (&p), 1);
  /* Only the requested rows count: not requested and not available is 0. */
  p.rows[3].requested = false;
  ck_assert_int_eq (kist_probe_status (&p), 0);
  p.rows[1].available = false;
  ck_assert_int_eq (kist_probe_status (&p), 0);
  kist_probe_clear (&p);
  ck_assert_uint_eq (p.n, 0);
  ck_assert_ptr_null (p.rows);
  P = p; /* nothing left for the teardown */
}
END_TEST

START_TEST (test_summary)
{
  struct kist_probe p = P;
  _cleanup_free_ char *s1 = kist_probe_summary (&p);
  ck_assert_ptr_nonnull (strstr (s1, "cannot be applied: cgroup.memory.max;"));
  ck_assert_ptr_nonnull (strstr (s1, "would refuse to run"));
  p.policy = "cgroup.*";
  _cleanup_free_ char *s2 = kist_probe_summary (&p);
  ck_assert_ptr_nonnull (strstr (s2, "run without it"));
  ck_assert_ptr_null (strstr (s2, "refuse"));
  p.policy = "rlimit.*";
  _cleanup_free_ char *s3 = kist_probe_summary (&p);
  ck_assert_ptr_nonnull (strstr (s3, "refuse"));
  p.rows[3].available = true;
  _cleanup_free_ char *s4 = kist_probe_summary (&p);
  ck_assert_str_eq (s4, "every requested layer can be applied");
}
END_TEST

START_TEST (test_json)
{
  struct kist_probe p = P;
  _cleanup_free_ char *json = kist_probe_json (&p);
  ck_assert (json[strlen (json) - 1] == '\n');
  yajl_val v = NULL;
  struct kist_error *e = NULL;
  ck_assert_int_eq (kist_json_parse (json, strlen (json), "probe", &v, &e), 0);
  ck_assert_int_eq (YAJL_GET_INTEGER (kist_json_obj_get (v, "probeVersion")), 1);
  ck_assert_int_eq (YAJL_GET_INTEGER (kist_json_obj_get (v, "status")), 1);
  yajl_val user = kist_json_obj_get (v, "user");
  ck_assert_str_eq (YAJL_GET_STRING (kist_json_obj_get (user, "name")), "nobody");
  ck_assert_int_eq (YAJL_GET_INTEGER (kist_json_obj_get (user, "uid")), 65534);
  yajl_val layers = kist_json_obj_get (v, "layers");
  ck_assert (YAJL_IS_ARRAY (layers));
  ck_assert_uint_eq (YAJL_GET_ARRAY (layers)->len, 4);
  yajl_val ok = YAJL_GET_ARRAY (layers)->values[0];
  yajl_val deg = YAJL_GET_ARRAY (layers)->values[2];
  yajl_val no = YAJL_GET_ARRAY (layers)->values[3];
  ck_assert_str_eq (YAJL_GET_STRING (kist_json_obj_get (ok, "layer")), "namespace.user");
  ck_assert (YAJL_IS_TRUE (kist_json_obj_get (ok, "available")));
  ck_assert_str_eq (YAJL_GET_STRING (kist_json_obj_get (ok, "detail")), "can be created");
  ck_assert_ptr_null (kist_json_obj_get (ok, "fix"));
  ck_assert_ptr_null (kist_json_obj_get (ok, "degraded"));
  ck_assert (YAJL_IS_TRUE (kist_json_obj_get (deg, "degraded")));
  ck_assert (YAJL_IS_FALSE (kist_json_obj_get (no, "available")));
  ck_assert_ptr_null (kist_json_obj_get (no, "detail"));
  ck_assert_str_eq (YAJL_GET_STRING (kist_json_obj_get (no, "reason")),
                    "memory controller not available (hugetlb)");
  ck_assert_str_eq (YAJL_GET_STRING (kist_json_obj_get (no, "fix")), "a host with the controller");
  const char *summary = YAJL_GET_STRING (kist_json_obj_get (v, "summary"));
  ck_assert_ptr_nonnull (summary);
  ck_assert_ptr_nonnull (strstr (summary, "cgroup.memory.max"));
  kist_json_tree_free (v);
}
END_TEST

START_TEST (test_table)
{
  /* The fix goes on a line of its own, under the detail column. */
  _cleanup_free_ char *t = kist_probe_table (&P);
  ck_assert_ptr_nonnull (strstr (t, "LAYER              APPLY     DETAIL OR REASON\n"));
  ck_assert_ptr_nonnull (strstr (t, "\nnamespace.user     yes       can be created\n"));
  ck_assert_ptr_nonnull (strstr (t, "\nnamespace.net      -         not requested: --net host\n"));
  ck_assert_ptr_nonnull (strstr (t, "\nidmap.uid          degraded  size 1\n"
                                    "                             fix: add a range\n"));
  ck_assert_ptr_nonnull (strstr (t, "\ncgroup.memory.max  no        memory controller"));
  ck_assert_ptr_nonnull (strstr (t, "\nuser: uid 65534 (nobody), gid 65534\nsummary: cannot"));
}
END_TEST

START_TEST (test_hint_and_words)
{
  char *reason = NULL, *fix = NULL;
  kist_probe_split_hint ("user.max_user_namespaces is 0 here: raise it (sysctl -w x=1)", &reason,
                         &fix);
  ck_assert_str_eq (reason, "user.max_user_namespaces is 0 here");
  ck_assert_str_eq (fix, "raise it (sysctl -w x=1)");
  free (reason);
  free (fix);
  kist_probe_split_hint ("no colon", &reason, &fix);
  ck_assert_str_eq (reason, "no colon");
  ck_assert_ptr_null (fix);
  free (reason);
  ck_assert (kist_probe_word_in ("cpuset cpu io memory pids\n", "memory"));
  ck_assert (kist_probe_word_in ("memory", "memory"));
  ck_assert (!kist_probe_word_in ("hugetlb", "memory"));
  ck_assert (!kist_probe_word_in ("cpuset", "cpu"));
  ck_assert (!kist_probe_word_in ("", "cpu"));
  ck_assert (!kist_probe_word_in (NULL, "cpu"));
}
END_TEST

int
main (void)
{
  const TTest *tests[] = { test_can_and_status, test_summary, test_json, test_table,
                           test_hint_and_words };
  Suite *s = suite_create ("probe");
  TCase *tc = tcase_create ("output");
  tcase_add_checked_fixture (tc, setup, teardown);
  for (size_t i = 0; i < KIST_ARRAY_SIZE (tests); i++)
    tcase_add_test (tc, tests[i]);
  suite_add_tcase (s, tc);
  return kist_unit_run (s);
}
