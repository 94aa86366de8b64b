/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for runtime/report.c. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "report.h"
#include "util.h"
#include "unit.h"

/* ---- helpers ---- */

static yajl_val
parse (const char *json)
{
  char errbuf[256];
  yajl_val v = yajl_tree_parse (json, errbuf, sizeof errbuf);
  ck_assert_msg (v != NULL, "JSON does not parse: %s\n%s", errbuf, json);
  return v;
}

static yajl_val
get (yajl_val obj, const char *key)
{
  ck_assert (YAJL_IS_OBJECT (obj));
  for (size_t i = 0; i < obj->u.object.len; i++)
    if (strcmp (obj->u.object.keys[i], key) == 0)
      return obj->u.object.values[i];
  return NULL;
}

static const char *
get_str (yajl_val obj, const char *key)
{
  yajl_val v = get (obj, key);
  ck_assert_msg (YAJL_IS_STRING (v), "`%s` is not a string", key);
  return v->u.string;
}

static yajl_val
layer_at (yajl_val root, size_t i)
{
  yajl_val layers = get (root, "layers");
  ck_assert (YAJL_IS_ARRAY (layers));
  ck_assert_uint_gt (layers->u.array.len, i);
  return layers->u.array.values[i];
}

static char *
report_summary (struct kist_report *r)
{
  _cleanup_free_ char *json = kist_report_to_json (r, false);
  yajl_val root = parse (json);
  char *s = xstrdup (get_str (root, "summary"));
  yajl_tree_free (root);
  return s;
}

/* ---- groups and policy ---- */

START_TEST (test_groups)
{
  static const struct
  {
    const char *name;
    enum kist_group g;
  } t[] = {
    /* clang-format off */
    { "namespace.net", KIST_GROUP_CONFINEMENT },  { "namespace.user", KIST_GROUP_CONFINEMENT },
    { "idmap.uid", KIST_GROUP_CONFINEMENT },      { "rootfs.pivot_root", KIST_GROUP_CONFINEMENT },
    { "mounts", KIST_GROUP_CONFINEMENT },         { "dev", KIST_GROUP_CONFINEMENT },
    { "masked_paths", KIST_GROUP_CONFINEMENT },   { "readonly_paths", KIST_GROUP_CONFINEMENT },
    { "hostname", KIST_GROUP_CONFINEMENT },       { "domainname", KIST_GROUP_CONFINEMENT },
    { "sysctl", KIST_GROUP_CONFINEMENT },         { "network.loopback", KIST_GROUP_CONFINEMENT },
    { "capabilities", KIST_GROUP_CONFINEMENT },   { "no_new_privileges", KIST_GROUP_CONFINEMENT },
    { "seccomp", KIST_GROUP_CONFINEMENT },        { "environment", KIST_GROUP_CONFINEMENT },
    { "user", KIST_GROUP_CONFINEMENT },           { "apparmor", KIST_GROUP_CONFINEMENT },
    { "selinux", KIST_GROUP_CONFINEMENT },        { "cgroup", KIST_GROUP_LIMITS },
    { "cgroup.memory.max", KIST_GROUP_LIMITS },   { "rlimit.RLIMIT_NOFILE", KIST_GROUP_LIMITS },
    { "oom_score_adj", KIST_GROUP_LIMITS },       { "cwd", KIST_GROUP_OTHER },
    { "hooks", KIST_GROUP_OTHER },                { "exec", KIST_GROUP_OTHER },
    { "intel_rdt", KIST_GROUP_OTHER },            { "namespaces", KIST_GROUP_OTHER },
    { "devices", KIST_GROUP_OTHER },              { "cgroupx", KIST_GROUP_OTHER },
    { "username", KIST_GROUP_OTHER },             { "", KIST_GROUP_OTHER },
    /* clang-format on */
  };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (t); i++)
    ck_assert_msg (kist_layer_group (t[i].name) == t[i].g, "group of `%s`", t[i].name);
  ck_assert (kist_layer_group (NULL) == KIST_GROUP_OTHER);
}
END_TEST

START_TEST (test_policy)
{
  struct kist_report *r = kist_report_new ("c1", "run", NULL);
  ck_assert (!kist_report_may_degrade (r, "seccomp"));
  kist_report_free (r);

  r = kist_report_new ("c1", "run", "all");
  ck_assert (kist_report_may_degrade (r, "seccomp"));
  ck_assert (kist_report_may_degrade (r, "rlimit.RLIMIT_NOFILE"));
  kist_report_free (r);

  r = kist_report_new ("c1", "run", "seccomp, rlimit.*,cgroup.memory.max");
  ck_assert (kist_report_may_degrade (r, "seccomp"));
  ck_assert (kist_report_may_degrade (r, "rlimit.RLIMIT_NOFILE"));
  ck_assert (kist_report_may_degrade (r, "rlimit.RLIMIT_NPROC"));
  ck_assert (!kist_report_may_degrade (r, "rlimit"));
  ck_assert (!kist_report_may_degrade (r, "rlimitx.A"));
  ck_assert (kist_report_may_degrade (r, "cgroup.memory.max"));
  ck_assert (!kist_report_may_degrade (r, "cgroup.pids.max"));
  ck_assert (!kist_report_may_degrade (r, "cgroup"));
  ck_assert (!kist_report_may_degrade (r, "seccomp.x"));
  ck_assert (!kist_report_may_degrade (r, "seccom"));
  ck_assert (!kist_report_may_degrade (r, "namespace.net"));
  kist_report_free (r);

  r = kist_report_new ("c1", "run", "allx,,*");
  ck_assert (!kist_report_may_degrade (r, "seccomp"));
  kist_report_free (r);
}
END_TEST

START_TEST (test_failed_closed)
{
  _cleanup_error_ struct kist_error *err = NULL;
  struct kist_report *r = kist_report_new ("c1", "create", NULL);
  int ret = kist_report_failed (r, "seccomp", NULL, ENOSYS, &err, "not implemented");
  ck_assert_int_lt (ret, 0);
  ck_assert_int_eq (ret, -ENOSYS);
  ck_assert_ptr_nonnull (err);
  ck_assert_str_eq (err->msg, "layer seccomp not applied: not implemented (allow it to degrade "
                              "with --allow-degraded seccomp)");
  ck_assert_int_eq (err->errnum, ENOSYS);
  /* Recorded anyway. */
  const struct kist_layer *l = kist_report_find (r, "seccomp");
  ck_assert_ptr_nonnull (l);
  ck_assert (!l->applied);
  ck_assert_str_eq (l->requested, "");
  ck_assert_int_eq (l->errnum, ENOSYS);
  ck_assert_str_eq (l->reason, "not implemented");
  kist_report_free (r);

  /* Without a reason, strerror is used. */
  kist_error_free (err);
  err = NULL;
  r = kist_report_new ("c1", "create", "seccomp");
  ret = kist_report_failed (r, "rlimit.RLIMIT_NOFILE", "1024:1024", EPERM, &err, NULL);
  ck_assert_int_eq (ret, -EPERM);
  ck_assert_str_eq (err->msg, "layer rlimit.RLIMIT_NOFILE not applied: Operation not permitted "
                              "(allow it to degrade with --allow-degraded rlimit.RLIMIT_NOFILE)");
  kist_report_free (r);
}
END_TEST

START_TEST (test_failed_degrade)
{
  _cleanup_error_ struct kist_error *err = NULL;
  struct kist_report *r = kist_report_new ("c1", "run", "rlimit.*");
  int ret = kist_report_failed (r, "rlimit.RLIMIT_NOFILE", "1024:1024", EPERM, &err, "setrlimit %s",
                                "failed");
  ck_assert_int_eq (ret, 0);
  ck_assert_ptr_null (err);
  ck_assert_uint_eq (r->n_layers, 1);
  ck_assert_str_eq (r->layers[0].name, "rlimit.RLIMIT_NOFILE");
  ck_assert_str_eq (r->layers[0].requested, "1024:1024");
  ck_assert_str_eq (r->layers[0].reason, "setrlimit failed");
  ck_assert (!r->layers[0].applied);
  kist_report_free (r);
}
END_TEST

START_TEST (test_record_order_find)
{
  struct kist_report *r = kist_report_new ("c1", "run", NULL);
  kist_report_applied (r, "namespace.pid", NULL, "new");
  kist_report_skip (r, "namespace.net", "shared with the host");
  kist_report_applied (r, "hostname", "kist", "%s", "set");
  kist_report_skip (r, "seccomp", NULL);
  ck_assert_uint_eq (r->n_layers, 4);
  ck_assert_str_eq (r->layers[0].name, "namespace.pid");
  ck_assert_str_eq (r->layers[0].requested, "");
  ck_assert_str_eq (r->layers[0].detail, "new");
  ck_assert_str_eq (r->layers[1].name, "namespace.net");
  ck_assert_ptr_null (r->layers[1].requested);
  ck_assert_str_eq (r->layers[1].detail, "shared with the host");
  ck_assert_str_eq (r->layers[2].requested, "kist");
  ck_assert_ptr_null (r->layers[3].detail);
  ck_assert_ptr_null (kist_report_find (r, "nope"));
  ck_assert_str_eq (kist_report_find (r, "hostname")->detail, "set");
  ck_assert (!r->exec_recorded);
  kist_report_applied (r, "exec", "/bin/sh", NULL);
  ck_assert (r->exec_recorded);
  /* Many entries (growth). */
  for (int i = 0; i < 100; i++)
    {
      _cleanup_free_ char *n = xasprintf ("rlimit.R%d", i);
      kist_report_skip (r, n, "%d", i);
    }
  ck_assert_uint_eq (r->n_layers, 105);
  ck_assert_str_eq (kist_report_find (r, "rlimit.R99")->detail, "99");
  kist_report_free (r);
  /* NULL report is tolerated. */
  kist_report_skip (NULL, "x", NULL);
  kist_report_applied (NULL, "x", NULL, NULL);
  kist_report_free (NULL);
}
END_TEST

/* ---- JSON ---- */

START_TEST (test_json_shape)
{
  struct kist_report *r = kist_report_new ("c1", "run", "cgroup.memory.max,seccomp");
  _cleanup_error_ struct kist_error *err = NULL;
  r->pid = 4242;
  kist_report_applied (r, "namespace.net", NULL, "new; links: lo UP");
  ck_assert_int_eq (kist_report_failed (r, "cgroup.memory.max", "268435456", ENOENT, &err,
                                        "memory controller not enabled \"here\"\n"),
                    0);
  kist_report_skip (r, "namespace.user", "shared with the host");
  kist_report_applied (r, "seccomp", "default", NULL);

  _cleanup_free_ char *json = kist_report_to_json (r, true);
  yajl_val root = parse (json);
  ck_assert (YAJL_IS_INTEGER (get (root, "reportVersion")));
  ck_assert_int_eq (YAJL_GET_INTEGER (get (root, "reportVersion")), 1);
  ck_assert_str_eq (get_str (root, "kist"), KIST_VERSION);
  ck_assert_str_eq (get_str (root, "id"), "c1");
  ck_assert_str_eq (get_str (root, "operation"), "run");
  ck_assert_int_eq (YAJL_GET_INTEGER (get (root, "pid")), 4242);
  yajl_val ad = get (root, "allowDegraded");
  ck_assert (YAJL_IS_ARRAY (ad));
  ck_assert_uint_eq (ad->u.array.len, 2);
  ck_assert_str_eq (ad->u.array.values[0]->u.string, "cgroup.memory.max");
  ck_assert_str_eq (ad->u.array.values[1]->u.string, "seccomp");

  yajl_val l0 = layer_at (root, 0);
  ck_assert_str_eq (get_str (l0, "layer"), "namespace.net");
  ck_assert (YAJL_IS_TRUE (get (l0, "requested")));
  ck_assert (YAJL_IS_TRUE (get (l0, "applied")));
  ck_assert_str_eq (get_str (l0, "detail"), "new; links: lo UP");
  ck_assert_ptr_null (get (l0, "errno"));
  ck_assert_ptr_null (get (l0, "reason"));

  yajl_val l1 = layer_at (root, 1);
  ck_assert_str_eq (get_str (l1, "layer"), "cgroup.memory.max");
  ck_assert_str_eq (get_str (l1, "requested"), "268435456");
  ck_assert (YAJL_IS_FALSE (get (l1, "applied")));
  ck_assert_str_eq (get_str (l1, "errno"), "ENOENT");
  ck_assert_str_eq (get_str (l1, "reason"), "memory controller not enabled \"here\"\n");
  ck_assert_ptr_null (get (l1, "detail"));

  yajl_val l2 = layer_at (root, 2);
  ck_assert (YAJL_IS_FALSE (get (l2, "requested")));
  ck_assert (YAJL_IS_FALSE (get (l2, "applied")));
  ck_assert_ptr_null (get (l2, "errno"));
  ck_assert_str_eq (get_str (l2, "detail"), "shared with the host");

  yajl_val l3 = layer_at (root, 3);
  ck_assert_str_eq (get_str (l3, "requested"), "default");
  ck_assert_ptr_null (get (l3, "detail"));

  yajl_val conf = get (root, "confinement");
  ck_assert (YAJL_IS_TRUE (get (conf, "applied")));
  ck_assert_uint_eq (get (conf, "missing")->u.array.len, 0);
  yajl_val lim = get (root, "limits");
  ck_assert (YAJL_IS_FALSE (get (lim, "applied")));
  ck_assert_uint_eq (get (lim, "missing")->u.array.len, 1);
  ck_assert_str_eq (get (lim, "missing")->u.array.values[0]->u.string, "cgroup.memory.max");
  ck_assert_str_eq (get_str (root, "summary"),
                    "confinement applied; limits NOT applied: cgroup.memory.max (memory controller "
                    "not enabled \"here\"\n)");
  yajl_tree_free (root);

  /* Compact output is one line and parses to the same thing. */
  _cleanup_free_ char *compact = kist_report_to_json (r, false);
  ck_assert_ptr_null (strchr (compact, '\n'));
  root = parse (compact);
  ck_assert_str_eq (get_str (root, "id"), "c1");
  yajl_tree_free (root);
  kist_report_free (r);
}
END_TEST

START_TEST (test_json_minimal)
{
  /* No pid, no policy: pid omitted, allowDegraded empty. */
  struct kist_report *r = kist_report_new ("c2", "create", NULL);
  _cleanup_free_ char *json = kist_report_to_json (r, false);
  yajl_val root = parse (json);
  ck_assert_ptr_null (get (root, "pid"));
  ck_assert (YAJL_IS_ARRAY (get (root, "allowDegraded")));
  ck_assert_uint_eq (get (root, "allowDegraded")->u.array.len, 0);
  ck_assert_uint_eq (get (root, "layers")->u.array.len, 0);
  ck_assert_str_eq (get_str (root, "summary"), "confinement none requested; limits none requested");
  yajl_tree_free (root);
  kist_report_free (r);
  ck_assert_ptr_null (kist_report_to_json (NULL, false));
}
END_TEST

START_TEST (test_json_invalid_utf8)
{
  struct kist_report *r = kist_report_new ("c1", "run", NULL);
  kist_report_applied (r, "mounts", NULL, "bind /a\xff\xfe/b \xc3\xa9");
  _cleanup_free_ char *json = kist_report_to_json (r, false);
  yajl_val root = parse (json);
  ck_assert_str_eq (get_str (layer_at (root, 0), "detail"),
                    "bind /a\xef\xbf\xbd\xef\xbf\xbd/b \xc3\xa9");
  yajl_tree_free (root);
  kist_report_free (r);
}
END_TEST

/* The rows written by hand (kist_report_to_json) are the text yajl's own
 * calls write (kist_report_to_json_yajl), byte for byte, pretty and
 * compact: every kind of row (applied, skipped, failed; requested absent,
 * empty or a string; detail or none; timed or not) and every string a row
 * can hold (escapes, each control byte, '/', UTF-8, invalid UTF-8). */
START_TEST (test_json_rows_by_hand)
{
  for (int rows = 0; rows < 2; rows++)
    for (int pretty = 0; pretty < 2; pretty++)
      {
        struct kist_report *r = kist_report_new ("c1", "run", "all");
        _cleanup_error_ struct kist_error *err = NULL;
        if (rows)
          {
            char ctl[64];
            for (int c = 1; c < 32; c++)
              ctl[c - 1] = (char) c;
            ctl[31] = '\0';
            kist_report_applied (r, "namespace.net", NULL, "new; links: lo UP");
            kist_report_applied (r, "namespace.uts", "", "quote \" backslash \\ slash / tab\t");
            kist_report_skip (r, "namespace.user", "shared with the host");
            kist_report_skip (r, "namespace.ipc", NULL);
            kist_report_applied (r, "seccomp", "default", NULL);
            kist_report_applied (r, "mounts", "/a\xff\xfe/b", "bind /a\xff\xfe/b \xc3\xa9 \xe2\x82\xac");
            kist_report_applied (r, "hostname", "h", "%s", ctl);
            kist_report_failed (r, "cgroup.memory.max", "268435456", ENOENT, &err,
                                "memory controller not enabled \"here\"\n");
            kist_report_failed (r, "cgroup.pids.max", "", EPERM, &err, NULL);
            kist_report_failed (r, "rlimit.RLIMIT_NOFILE", NULL, 0, &err, "\x7f del");
            for (size_t i = 0; i < r->n_layers; i++)
              if (i % 3 != 2)
                {
                  r->layers[i].step = (unsigned) (i + 1);
                  r->layers[i].usec = i == 4 ? INT64_MAX / 4 : (int64_t) (i * 97);
                }
            r->pid = 77;
          }
        _cleanup_free_ char *a = kist_report_to_json (r, pretty);
        _cleanup_free_ char *b = kist_report_to_json_yajl (r, pretty);
        ck_assert_str_eq (a, b);
        if (rows)
          ck_assert_ptr_nonnull (strstr (a, "\\u0001"));
        yajl_val root = parse (a); /* and it is JSON */
        yajl_tree_free (root);
        kist_report_free (r);
      }
}
END_TEST

START_TEST (test_summaries)
{
  _cleanup_error_ struct kist_error *err = NULL;
  struct kist_report *r = kist_report_new ("c1", "run", "all");
  char *s;

  kist_report_applied (r, "namespace.pid", NULL, NULL);
  kist_report_applied (r, "rlimit.RLIMIT_NOFILE", "1024:1024", NULL);
  s = report_summary (r);
  ck_assert_str_eq (s, "confinement applied; limits applied");
  free (s);
  kist_report_free (r);

  r = kist_report_new ("c1", "run", "all");
  kist_report_applied (r, "namespace.pid", NULL, NULL);
  kist_report_skip (r, "cgroup", "no resources requested");
  s = report_summary (r);
  ck_assert_str_eq (s, "confinement applied; limits none requested");
  free (s);

  kist_report_failed (r, "seccomp", NULL, ENOSYS, &err, "not implemented");
  kist_report_failed (r, "rlimit.RLIMIT_NOFILE", "1024:1024", EPERM, &err, NULL);
  s = report_summary (r);
  ck_assert_str_eq (s, "confinement NOT applied: seccomp (not implemented); limits NOT applied: "
                       "rlimit.RLIMIT_NOFILE (Operation not permitted)");
  free (s);

  kist_report_failed (r, "apparmor", "profile-x", ENOTSUP, &err, "AppArmor is not supported");
  kist_report_failed (r, "hooks.prestart", NULL, ENOSYS, &err, "hooks are not implemented");
  s = report_summary (r);
  ck_assert_str_eq (s, "confinement NOT applied: seccomp (not implemented), apparmor (AppArmor is "
                       "not supported); limits NOT applied: rlimit.RLIMIT_NOFILE (Operation not "
                       "permitted); other NOT applied: hooks.prestart (hooks are not implemented)");
  free (s);
  ck_assert_ptr_null (err);

  /* Group objects. */
  _cleanup_free_ char *json = kist_report_to_json (r, false);
  yajl_val root = parse (json);
  yajl_val miss = get (get (root, "confinement"), "missing");
  ck_assert (YAJL_IS_FALSE (get (get (root, "confinement"), "applied")));
  ck_assert_uint_eq (miss->u.array.len, 2);
  ck_assert_str_eq (miss->u.array.values[0]->u.string, "seccomp");
  ck_assert_str_eq (miss->u.array.values[1]->u.string, "apparmor");
  yajl_tree_free (root);
  kist_report_free (r);
}
END_TEST

/* ---- wire format ---- */

static void
check_roundtrip (const struct kist_layer *l)
{
  char *buf = NULL;
  size_t len = 0;
  struct kist_layer out;
  ck_assert_int_eq (kist_layer_encode (l, &buf, &len), 0);
  ck_assert_int_eq (kist_layer_decode (buf, len, &out), 0);
  ck_assert_str_eq (out.name, l->name);
  if (l->requested == NULL)
    ck_assert_ptr_null (out.requested);
  else
    ck_assert_str_eq (out.requested, l->requested);
  ck_assert (out.applied == l->applied);
  ck_assert_int_eq (out.errnum, l->errnum);
  if (l->reason == NULL)
    ck_assert_ptr_null (out.reason);
  else
    ck_assert_str_eq (out.reason, l->reason);
  if (l->detail == NULL)
    ck_assert_ptr_null (out.detail);
  else
    ck_assert_str_eq (out.detail, l->detail);

  /* Every truncation is rejected, and so is any trailing byte. */
  for (size_t i = 0; i < len; i++)
    {
      struct kist_layer bad;
      char *copy = xmalloc (i ? i : 1);
      memcpy (copy, buf, i);
      ck_assert_int_lt (kist_layer_decode (copy, i, &bad), 0);
      ck_assert_ptr_null (bad.name);
      free (copy);
    }
  char *longer = xmalloc (len + 1);
  memcpy (longer, buf, len);
  longer[len] = '\0';
  struct kist_layer bad;
  ck_assert_int_lt (kist_layer_decode (longer, len + 1, &bad), 0);
  free (longer);

  kist_layer_clear (&out);
  free (buf);
}

START_TEST (test_wire_roundtrip)
{
  struct kist_layer a = { .name = "namespace.net", .requested = NULL, .applied = false };
  struct kist_layer b = { .name = "namespace.net", .requested = "", .applied = true, .detail = "" };
  struct kist_layer c = { .name = "rlimit.RLIMIT_NOFILE",
                          .requested = "1024:1024",
                          .applied = false,
                          .errnum = EPERM,
                          .reason = "setrlimit: \"x\"\nline2",
                          .detail = NULL };
  struct kist_layer d = { .name = "seccomp",
                          .requested = "0",
                          .applied = true,
                          .errnum = 4095,
                          .reason = "",
                          .detail = "1\xff\xc3" };
  check_roundtrip (&a);
  check_roundtrip (&b);
  check_roundtrip (&c);
  check_roundtrip (&d);

  /* Added to a report, the copy is independent. */
  struct kist_report *r = kist_report_new ("x", "run", NULL);
  kist_report_add (r, &c);
  ck_assert_ptr_ne (r->layers[0].reason, c.reason);
  ck_assert_str_eq (r->layers[0].reason, c.reason);
  kist_report_free (r);
}
END_TEST

static void
expect_bad (const char *buf, size_t len)
{
  struct kist_layer out;
  /* Copy into an exactly-sized heap buffer so ASan catches overreads. */
  char *copy = xmalloc (len ? len : 1);
  memcpy (copy, buf, len);
  ck_assert_msg (kist_layer_decode (copy, len, &out) < 0, "accepted a malformed buffer (len %zu)",
                 len);
  ck_assert_ptr_null (out.name);
  ck_assert_ptr_null (out.requested);
  ck_assert_ptr_null (out.reason);
  ck_assert_ptr_null (out.detail);
  free (copy);
}
#define BAD(lit) expect_bad (lit, sizeof (lit) - 1)

START_TEST (test_wire_malformed)
{
  struct kist_layer out;
  ck_assert_int_lt (kist_layer_decode (NULL, 10, &out), 0);
  BAD ("");
  BAD ("x");
  /* clang-format off */
  BAD ("seccomp");                                 /* no NUL */
  BAD ("\0" "0\0" "1\0" "0\0" "0\0" "0");          /* empty name */
  BAD ("a b\0" "0\0" "1\0" "0\0" "0\0" "0");       /* space in name */
  BAD ("a\n\0" "0\0" "1\0" "0\0" "0\0" "0");       /* control char */
  BAD ("a\0" "2\0" "1\0" "0\0" "0\0" "0");         /* bad requested flag */
  BAD ("a\0" "\0" "1\0" "0\0" "0\0" "0");          /* empty requested flag */
  BAD ("a\0" "0x\0" "1\0" "0\0" "0\0" "0");        /* NULL flag with a value */
  BAD ("a\0" "0\0" "2\0" "0\0" "0\0" "0");         /* applied not 0/1 */
  BAD ("a\0" "0\0" "11\0" "0\0" "0\0" "0");
  BAD ("a\0" "0\0" "1\0" "\0" "0\0" "0");          /* empty errnum */
  BAD ("a\0" "0\0" "1\0" "-1\0" "0\0" "0");        /* negative */
  BAD ("a\0" "0\0" "1\0" "4096\0" "0\0" "0");      /* out of range */
  BAD ("a\0" "0\0" "1\0" "99999\0" "0\0" "0");
  BAD ("a\0" "0\0" "1\0" "01\0" "0\0" "0");        /* leading zero */
  BAD ("a\0" "0\0" "1\0" "0\0" "0\0");             /* missing detail */
  BAD ("a\0" "0\0" "1\0" "0\0" "0\0" "0");         /* detail without NUL */
  BAD ("a\0" "0\0" "1\0" "0\0" "0\0" "0\0" "x");   /* trailing bytes */
  BAD ("a\0" "0\0" "1\0" "0\0" "0\0" "0\0" "\0");
  BAD ("a\0" "0\0" "1\0" "0\0" "0\0" "0\0");            /* no timing */
  BAD ("a\0" "0\0" "1\0" "0\0" "0\0" "0\0" "0\0");       /* timing without usec */
  BAD ("a\0" "0\0" "1\0" "0\0" "0\0" "0\0" "0 5\0");     /* usec without step */
  BAD ("a\0" "0\0" "1\0" "0\0" "0\0" "0\0" "1  5\0");    /* two spaces */
  BAD ("a\0" "0\0" "1\0" "0\0" "0\0" "0\0" "01 5\0");    /* leading zero */
  BAD ("a\0" "0\0" "1\0" "0\0" "0\0" "0\0" "1 -5\0");    /* negative */
  BAD ("a\0" "0\0" "1\0" "0\0" "0\0" "0\0" "1 5x\0");
  BAD ("a\0" "0\0" "1\0" "0\0" "0\0" "0\0" "1 1000000000001\0"); /* > 10^12 */
  BAD ("a\0" "0\0" "1\0" "0\0" "0\0" "0\0" "4294967296 5\0");    /* step > 2^32-1 */
  BAD ("a\0" "0\0" "1\0" "0\0" "0\0" "0\0" "1 5\0" "0\0");  /* "0" expectation */
  /* clang-format on */

  /* A well-formed one for contrast. */
  static const char good[] = "a\0"
                             "1v\0"
                             "1\0"
                             "5\0"
                             "1why\0"
                             "0\0"
                             "3 120";
  ck_assert_int_eq (kist_layer_decode (good, sizeof good, &out), 0);
  ck_assert_uint_eq (out.step, 3);
  ck_assert_int_eq (out.usec, 120);
  ck_assert_str_eq (out.name, "a");
  ck_assert_str_eq (out.requested, "v");
  ck_assert (out.applied);
  ck_assert_int_eq (out.errnum, 5);
  ck_assert_str_eq (out.reason, "why");
  ck_assert_ptr_null (out.detail);
  kist_layer_clear (&out);

  /* Too big: rejected by both sides. */
  char *big = xmalloc (KIST_LAYER_ENCODED_MAX + 16);
  memset (big, 'x', KIST_LAYER_ENCODED_MAX + 15);
  big[KIST_LAYER_ENCODED_MAX + 15] = '\0';
  struct kist_layer l = { .name = "mounts", .requested = "", .detail = big };
  char *buf = NULL;
  size_t len = 0;
  ck_assert_int_eq (kist_layer_encode (&l, &buf, &len), -EMSGSIZE);
  ck_assert_int_lt (kist_layer_decode (big, KIST_LAYER_ENCODED_MAX + 16, &out), 0);
  free (big);
  /* Invalid names cannot be encoded. */
  struct kist_layer bn = { .name = "a b" };
  ck_assert_int_eq (kist_layer_encode (&bn, &buf, &len), -EINVAL);
}
END_TEST

/* Random bytes never crash the decoder (ASan checks the bounds). */
START_TEST (test_wire_fuzz)
{
  unsigned int seed = 12345;
  for (int iter = 0; iter < 20000; iter++)
    {
      size_t len = (size_t) (rand_r (&seed) % 40);
      char *buf = xmalloc (len ? len : 1);
      for (size_t i = 0; i < len; i++)
        {
          int k = rand_r (&seed) % 6;
          buf[i] = k == 0 ? '\0' : k == 1 ? '0' : k == 2 ? '1' : (char) (rand_r (&seed) & 0xff);
        }
      struct kist_layer out;
      if (kist_layer_decode (buf, len, &out) == 0)
        {
          char *re = NULL;
          size_t rlen = 0;
          ck_assert_int_eq (kist_layer_encode (&out, &re, &rlen), 0);
          ck_assert_uint_eq (rlen, len);
          ck_assert (memcmp (re, buf, len) == 0);
          free (re);
          kist_layer_clear (&out);
        }
      free (buf);
    }
}
END_TEST

/* ---- text rendering ---- */

START_TEST (test_text)
{
  _cleanup_error_ struct kist_error *err = NULL;
  struct kist_report *r = kist_report_new ("c1", "run", "all");
  kist_report_applied (r, "namespace.net", NULL, "new; links: lo UP");
  kist_report_skip (r, "namespace.user", NULL);
  kist_report_failed (r, "rlimit.RLIMIT_NOFILE", "1024:1024", EPERM, &err, "setrlimit\x1b[31m");
  _cleanup_free_ char *json = kist_report_to_json (r, true);
  _cleanup_free_ char *text = kist_report_json_to_text (json, strlen (json), &err);
  ck_assert_ptr_null (err);
  ck_assert_ptr_nonnull (text);
  const char *expect
      = "LAYER                 REQUESTED  APPLIED  DETAIL\n"
        "namespace.net         yes        yes      new; links: lo UP\n"
        "namespace.user        no         -\n"
        "rlimit.RLIMIT_NOFILE  1024:1024  no       EPERM: setrlimit?[31m\n"
        "\n"
        "summary: confinement applied; limits NOT applied: rlimit.RLIMIT_NOFILE (setrlimit?[31m)\n";
  ck_assert_str_eq (text, expect);
  kist_report_free (r);
}
END_TEST

/* Every entry carries its row's time; the text shows it once per row. */
START_TEST (test_text_timed)
{
  _cleanup_error_ struct kist_error *err = NULL;
  struct kist_report *r = kist_report_new ("c1", "run", NULL);
  kist_report_applied (r, "namespace.net", NULL, "new");
  kist_report_applied (r, "namespace.pid", NULL, "new");
  kist_report_time_step (r, 0, 7, 250);
  kist_report_applied (r, "hostname", "h", "set");
  kist_report_time_step (r, 2, 9, 31);
  kist_report_time_step (r, 0, 12, 999); /* already timed: unchanged */
  kist_report_skip (r, "exec", NULL);    /* outside the loops: no time */
  r->startup_usec = 4000;
  _cleanup_free_ char *json = kist_report_to_json (r, false);
  ck_assert_ptr_nonnull (strstr (json, "\"layer\":\"namespace.pid\",\"requested\":true,"
                                       "\"applied\":true,\"detail\":\"new\",\"step\":7,\"usec\":250}"));
  ck_assert_ptr_nonnull (strstr (json, "\"timing\":{\"layersUsec\":281,\"startupUsec\":4000}"));
  _cleanup_free_ char *text = kist_report_json_to_text (json, strlen (json), &err);
  ck_assert_ptr_null (err);
  const char *expect = "LAYER          REQUESTED  APPLIED  USEC  DETAIL\n"
                       "namespace.net  yes        yes      250   new\n"
                       "namespace.pid  yes        yes      ^     new\n"
                       "hostname       h          yes      31    set\n"
                       "exec           no         -        -\n";
  ck_assert_msg (strncmp (text, expect, strlen (expect)) == 0, "%s", text);
  ck_assert_ptr_nonnull (strstr (text, "\ntiming: layers 281 us, kist's start to the execve 4000 us\n"));
  /* Read back (the stored report.json for kist start): the same times. */
  _cleanup_report_ struct kist_report *back = kist_report_from_json (json, strlen (json), &err);
  ck_assert_ptr_nonnull (back);
  ck_assert_uint_eq (back->layers[1].step, 7);
  ck_assert_int_eq (back->layers[1].usec, 250);
  ck_assert_uint_eq (back->layers[3].step, 0);
  ck_assert_int_eq (back->startup_usec, 4000);
  /* And over the wire. */
  char *buf = NULL;
  size_t len = 0;
  struct kist_layer out;
  ck_assert_int_eq (kist_layer_encode (&r->layers[2], &buf, &len), 0);
  ck_assert_int_eq (kist_layer_decode (buf, len, &out), 0);
  ck_assert_uint_eq (out.step, 9);
  ck_assert_int_eq (out.usec, 31);
  kist_layer_clear (&out);
  free (buf);
  kist_report_free (r);
}
END_TEST

START_TEST (test_text_malformed)
{
  static const char *bad[] = {
    "",
    "{",
    "[]",
    "{\"layers\": 3}",
    "{\"summary\": \"x\"}",
    "{\"layers\": [1]}",
    "{\"layers\": [{\"requested\": true}]}",
    "{\"layers\": [], \"summary\": 5}",
    "{\"layers\": []} trailing",
  };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (bad); i++)
    {
      _cleanup_error_ struct kist_error *err = NULL;
      char *t = kist_report_json_to_text (bad[i], strlen (bad[i]), &err);
      ck_assert_msg (t == NULL, "accepted `%s`", bad[i]);
      ck_assert_ptr_nonnull (err);
      ck_assert (strncmp (err->msg, "report: ", 8) == 0);
    }
  /* The message names what is wrong. */
  static const char *const named[][2] = {
    { "[]", "top level" },          { "{\"layers\": 3}", "layers" },
    { "{\"summary\": \"x\"}", "layers" }, { "{\"layers\": [1]}", "layers[0]" },
    { "{\"layers\": [], \"summary\": 5}", "summary" },
  };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (named); i++)
    {
      _cleanup_error_ struct kist_error *e = NULL;
      ck_assert_ptr_null (kist_report_json_to_text (named[i][0], strlen (named[i][0]), &e));
      ck_assert_msg (strstr (e->msg, named[i][1]), "%s: want %s: %s", named[i][0], named[i][1],
                     e->msg);
    }
  /* Embedded NUL. */
  _cleanup_error_ struct kist_error *err = NULL;
  ck_assert_ptr_null (kist_report_json_to_text ("{\"layers\":[]}\0x", 15, &err));
  ck_assert_ptr_nonnull (err);
  /* len shorter than the string: only len bytes are used. */
  kist_error_free (err);
  err = NULL;
  ck_assert_ptr_null (kist_report_json_to_text ("{\"layers\":[]}", 5, &err));
  /* Minimal valid. */
  kist_error_free (err);
  err = NULL;
  _cleanup_free_ char *t = kist_report_json_to_text ("{\"layers\":[]}", 13, &err);
  ck_assert_ptr_nonnull (t);
  ck_assert_str_eq (t, "LAYER  REQUESTED  APPLIED  DETAIL\n\nsummary: \n");
}
END_TEST

/* ---- writing ---- */

START_TEST (test_write_path)
{
  char tmpl[] = "/tmp/kist-test-report.XXXXXX";
  ck_assert_ptr_nonnull (mkdtemp (tmpl));
  _cleanup_free_ char *path = xasprintf ("%s/report.json", tmpl);
  _cleanup_error_ struct kist_error *err = NULL;
  struct kist_report *r = kist_report_new ("c1", "create", NULL);
  kist_report_applied (r, "namespace.pid", NULL, "new");

  /* Replace an existing file atomically (rename: new inode). */
  int fd = open (path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  ck_assert_int_ge (fd, 0);
  ck_assert_int_eq (write (fd, "old", 3), 3);
  close (fd);
  struct stat before, after;
  ck_assert_int_eq (stat (path, &before), 0);

  mode_t old_umask = umask (077);
  ck_assert_int_eq (kist_report_write_path (r, path, &err), 0);
  umask (old_umask);
  ck_assert_ptr_null (err);
  ck_assert_int_eq (stat (path, &after), 0);
  ck_assert_uint_ne (before.st_ino, after.st_ino);
  ck_assert_uint_eq (after.st_mode & 07777, 0644);

  char *data = NULL;
  size_t len = 0;
  ck_assert_int_eq (kist_read_file_at (AT_FDCWD, path, 1 << 20, &data, &len, &err), 0);
  ck_assert_uint_gt (len, 0);
  ck_assert_int_eq (data[len - 1], '\n');
  yajl_val root = parse (data);
  ck_assert_str_eq (get_str (root, "id"), "c1");
  yajl_tree_free (root);
  free (data);

  /* No temp files left behind. */
  _cleanup_free_ char *other = xasprintf ("%s/.report.json.tmp.%d", tmpl, (int) getpid ());
  ck_assert_int_ne (access (other, F_OK), 0);

  /* Relative path (cwd). */
  char cwd[4096];
  ck_assert_ptr_nonnull (getcwd (cwd, sizeof cwd));
  ck_assert_int_eq (chdir (tmpl), 0);
  ck_assert_int_eq (kist_report_write_path (r, "rel.json", &err), 0);
  ck_assert_int_eq (access ("rel.json", F_OK), 0);
  ck_assert_int_eq (chdir (cwd), 0);

  /* Errors. */
  _cleanup_free_ char *missing = xasprintf ("%s/nodir/r.json", tmpl);
  ck_assert_int_lt (kist_report_write_path (r, missing, &err), 0);
  ck_assert_ptr_nonnull (strstr (err->msg, "nodir"));
  kist_error_free (err);
  err = NULL;
  _cleanup_free_ char *dirpath = xasprintf ("%s/", tmpl);
  ck_assert_int_lt (kist_report_write_path (r, dirpath, &err), 0);
  kist_error_free (err);
  err = NULL;
  ck_assert_int_lt (kist_report_write_path (r, "", &err), 0);

  /* write_at into a directory fd. */
  kist_error_free (err);
  err = NULL;
  int dfd = open (tmpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ck_assert_int_eq (kist_report_write_at (r, dfd, "report2.json", 0600, &err), 0);
  struct stat st;
  ck_assert_int_eq (fstatat (dfd, "report2.json", &st, 0), 0);
  ck_assert_uint_eq (st.st_mode & 07777, 0600);

  /* write_fd. */
  int pfd[2];
  ck_assert_int_eq (pipe2 (pfd, O_CLOEXEC), 0);
  ck_assert_int_eq (kist_report_write_fd (r, pfd[1], &err), 0);
  close (pfd[1]);
  char *piped = NULL;
  ck_assert_int_eq (kist_read_fd (pfd[0], 1 << 20, &piped, &len, &err), 0);
  close (pfd[0]);
  root = parse (piped);
  ck_assert_str_eq (get_str (root, "operation"), "create");
  yajl_tree_free (root);
  free (piped);

  /* Clean up. */
  unlinkat (dfd, "report.json", 0);
  unlinkat (dfd, "report2.json", 0);
  unlinkat (dfd, "rel.json", 0);
  close (dfd);
  ck_assert_int_eq (rmdir (tmpl), 0);
  kist_report_free (r);
}
END_TEST

static Suite *
report_suite (void)
{
  Suite *s = suite_create ("report");
  TCase *tc = tcase_create ("core");
  tcase_add_test (tc, test_groups);
  tcase_add_test (tc, test_json_rows_by_hand);
  tcase_add_test (tc, test_policy);
  tcase_add_test (tc, test_failed_closed);
  tcase_add_test (tc, test_failed_degrade);
  tcase_add_test (tc, test_record_order_find);
  tcase_add_test (tc, test_json_shape);
  tcase_add_test (tc, test_json_minimal);
  tcase_add_test (tc, test_json_invalid_utf8);
  tcase_add_test (tc, test_summaries);
  tcase_add_test (tc, test_wire_roundtrip);
  tcase_add_test (tc, test_wire_malformed);
  tcase_add_test (tc, test_wire_fuzz);
  tcase_add_test (tc, test_text);
  tcase_add_test (tc, test_text_timed);
  tcase_add_test (tc, test_text_malformed);
  tcase_add_test (tc, test_write_path);
  tcase_set_timeout (tc, 60);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  return kist_unit_run (report_suite ());
}
