/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist gc [--dry-run] [--format text|json]: remove the sandboxes whose
 * deadline has passed or whose owning kist process is gone (design.md
 * section 5), and what an interrupted create left (issue #8): a state dir
 * whose intent record says creating while its kist is gone, one without
 * state.json, and the temporary dirs (@creating-*) of a create killed before
 * its state dir appeared.  Containers without a deadline and without an owning
 * kist (kist create, kist run --detach) are never touched, nor is a sandbox
 * within its deadline whose kist is alive, nor anything whose lock another
 * kist command holds (a create in progress holds it from the start).  What
 * is garbage and its removal are kist_gc (lifecycle.c); this file parses
 * the flags and prints each entry as text or JSON. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "json.h"
#include "log.h"
#include "sandbox.h"
#include "util.h"

static void
print_text (const struct kist_gc_entry *e, bool dry_run)
{
  if (e->busy)
    {
      printf ("skipped %s: %s, but another kist command holds its lock\n", e->id, e->reason);
      return;
    }
  if (dry_run && !e->failed)
    {
      printf ("would remove %s: %s\n", e->id, e->reason);
      return;
    }
  char buf[256] = "";
  const char *sep = "";
  size_t n = 0;
#define GC_ADD(cond, what)                                                   \
  if (cond)                                                                  \
    {                                                                        \
      n += (size_t) snprintf (buf + n, sizeof buf - n, "%s%s", sep, what);  \
      sep = ", ";                                                            \
    }
  GC_ADD (e->killed, "processes killed");
  GC_ADD (e->cgroup_removed, "cgroup removed");
  GC_ADD (e->state_removed, "state removed");
  GC_ADD (e->scratch_removed, "scratch removed");
#undef GC_ADD
  if (e->failed)
    {
      printf ("failed to remove %s: %s%s\n", e->id, buf[0] ? buf : "nothing removed",
              buf[0] ? " before the error" : "");
      kist_log_error ("gc: container `%s` (%s): %s", e->id, e->reason, e->error);
      return;
    }
  printf ("removed %s: %s\n", e->id, buf[0] ? buf : "nothing left to remove");
  if (e->kept)
    printf ("kept %s: the --keep work dir %s\n", e->id, e->kept);
}

static void
gen_bool (yajl_gen g, const char *key, bool v)
{
  kist_json_gen_str_lossy (g, key);
  yajl_gen_bool (g, v);
}

static void
gen_str (yajl_gen g, const char *key, const char *v)
{
  kist_json_gen_str_lossy (g, key);
  kist_json_gen_str_lossy (g, v);
}

static void
gen_int (yajl_gen g, const char *key, long long v)
{
  kist_json_gen_str_lossy (g, key);
  kist_json_gen_integer (g, v);
}

static void
gen_entry_json (yajl_gen g, const struct kist_gc_entry *e, bool dry_run)
{
  yajl_gen_map_open (g);
  gen_str (g, "id", e->id);
  gen_str (g, "reason", e->reason);
  gen_int (g, "deadline", e->deadline);
  gen_int (g, "kistPid", e->kist_pid);
  gen_str (g, "action", e->busy ? "skipped" : dry_run ? "would-remove"
                                  : e->failed ? "failed" : "removed");
  if (!dry_run && !e->busy)
    {
      gen_bool (g, "processesKilled", e->killed);
      gen_bool (g, "cgroupRemoved", e->cgroup_removed);
      gen_bool (g, "stateRemoved", e->state_removed);
      gen_bool (g, "scratchRemoved", e->scratch_removed);
      if (e->kept)
        gen_str (g, "kept", e->kept);
      if (e->failed)
        gen_str (g, "error", e->error);
    }
  yajl_gen_map_close (g);
}

/* The temporary dir of a create killed before its state dir appeared. */
static void
print_temp (yajl_gen jg, const struct kist_gc_entry *e, bool dry_run)
{
  if (jg)
    {
      yajl_gen_map_open (jg);
      gen_str (jg, "id", e->id);
      gen_str (jg, "reason", e->reason);
      gen_str (jg, "action", dry_run ? "would-remove" : "removed");
      if (!dry_run)
        gen_bool (jg, "stateRemoved", true);
      yajl_gen_map_close (jg);
    }
  else if (dry_run)
    printf ("would remove %s: %s\n", e->id, e->reason);
  else
    printf ("removed %s: %s (state removed)\n", e->id, e->reason);
}

/* A shared sandbox root (sandbox.h), as text: removed whole or not at all. */
static bool
print_shared_root (const struct kist_gc_entry *e, bool dry_run)
{
  static const char prefix[] = KIST_SANDBOX_ROOT_DIR "/";
  if (e->kind != KIST_GC_SANDBOX_DIR || strncmp (e->id, prefix, sizeof prefix - 1) != 0)
    return false;
  if (e->failed)
    printf ("failed to remove %s: %s\n", e->id, e->error);
  else
    printf ("%s %s: %s\n", dry_run ? "would remove" : "removed", e->id, e->reason);
  return true;
}

/* kist_gc's callback: one entry, as it is handled. */
static void
print_entry (const struct kist_gc_entry *e, bool dry_run, void *arg)
{
  yajl_gen jg = arg;
  if (e->kind == KIST_GC_TEMP)
    print_temp (jg, e, dry_run);
  else if (jg)
    gen_entry_json (jg, e, dry_run);
  else if (!print_shared_root (e, dry_run))
    print_text (e, dry_run);
}

int
kist_cmd_gc (const struct kist_globals *g, int argc, char **argv, struct kist_error **err)
{
  const char *format = "text";
  bool dry_run = false;
  const struct kist_cmd_opt opts[] = { { "dry-run", 'n', &dry_run, NULL, NULL },
                                       { "format", 'f', NULL, &format, "text|json" } };
  int first = kist_cmd_options ("gc", argc, argv, opts, KIST_ARRAY_SIZE (opts), err);
  if (first < 0)
    return first == KIST_CMD_HELPED ? 0 : KIST_EXIT_USAGE;
  bool json = strcmp (format, "json") == 0;
  if (first < argc)
    {
      kist_error_make (err, EINVAL, "gc: unexpected argument `%s` (gc takes no container id)",
                       argv[first]);
      return KIST_EXIT_USAGE;
    }

  _cleanup_yajl_gen_ yajl_gen jg = json ? kist_json_gen_new (true, true) : NULL;
  if (jg)
    yajl_gen_array_open (jg);
  int failed = kist_gc (g->root, dry_run, print_entry, jg, err);
  if (failed < 0)
    return KIST_EXIT_USAGE;
  if (jg)
    {
      yajl_gen_array_close (jg);
      _cleanup_free_ char *text = kist_json_gen_take (jg);
      printf ("%s\n", text);
    }
  fflush (stdout);
  return failed ? 1 : 0;
}
