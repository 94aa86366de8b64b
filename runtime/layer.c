/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the layer registry.  Every layer of every operation, declared once,
 * in the order it runs: kist_create, kist_exec and the sandbox go through
 * the phases of this one table; the report's vocabulary (the entry names a
 * report may hold, and their group) is the table's entries, so report.c,
 * `kist features` and kist-report.5 cannot drift from what runs (a unit test
 * compares them).
 *
 * Adding a layer: one row here, one file with its entry point (layer.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "cgroup.h"
#include "hooks.h"
#include "landlock.h"
#include "layer.h"
#include "seccomp.h"
#include "sync.h"
#include "terminal.h"
#include "util.h"
#include "verify.h"

/* From here on no process in the container can reach the init through
 * /proc/PID (fd, mem, ptrace): it becomes non-dumpable before it joins or
 * creates anything, and stays so until execve (CVE-2016-9962).  The
 * rootless parent wrote the id maps before GO, while it still could. */
static int
nondumpable (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  (void) ctx;
  (void) r;
  if (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 || prctl (PR_GET_DUMPABLE, 0, 0, 0, 0) != 0)
    return kist_error_make (err, errno, "prctl(PR_SET_DUMPABLE, 0)");
  return 0;
}

/* ---- adapters: entry points whose own signature carries more */

static int
terminal_prepare (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  return kist_terminal_prepare (ctx, r, ctx->tty.relay, err);
}

static int
seccomp_prepare (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  return kist_seccomp_prepare (ctx, ctx->root_fd, r, err);
}

static int
cgroup_prepare (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  return kist_cgroup_apply (ctx, r, &ctx->cgroup, err);
}

static int
cgroup_open (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  return kist_cgroup_open (ctx->cgroup_path, r, &ctx->cgroup, err);
}

static int
cgroup_join (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  return kist_cgroup_join (r, ctx->cgroup, ctx->pid, ctx->cgroup_born_in, err);
}

/* ---- entry lists */

/* C (name), or C (name, verifier): an entry of the confinement group, and
 * the function that verifies it from outside (verify.h). */
#define C(n, ...) { n, KIST_GROUP_CONFINEMENT, __VA_ARGS__ }
#define L(n, ...) { n, KIST_GROUP_LIMITS, __VA_ARGS__ }
#define O(n, ...) { n, KIST_GROUP_OTHER, __VA_ARGS__ }
#define E(...) ((const struct kist_entry_def[]){ __VA_ARGS__, { NULL, KIST_GROUP_OTHER, NULL } })

#define CR KIST_FOR_CREATE
#define EX KIST_FOR_EXEC
#define SB KIST_FOR_SANDBOX
#define NM KIST_NEEDS_MOUNT_NS

/* The table of contents.  Within a phase, rows run top-down; a row that
 * appears twice (seccomp, terminal, cgroup) is one layer acting at two
 * moments, each stated in its `order`. */
const struct kist_layer_def kist_layers[] = {
  /* ---- PREPARE: the parent, before clone. */
  { KIST_PHASE_PREPARE, CR, kist_unsupported_apply, NULL,
    E (C ("apparmor"), C ("selinux"), O ("intel_rdt")),
    "refused before anything is made: nothing to clean up" },
  { KIST_PHASE_PREPARE, CR | EX, terminal_prepare, NULL, E (O ("terminal")),
    "process.terminal: where the master goes (console socket, relay)" },
  { KIST_PHASE_PREPARE, CR | EX, seccomp_prepare, NULL, E (C ("seccomp")),
    "the filter compiled (or taken from the cache) once, so the child only loads it" },
  { KIST_PHASE_PREPARE, CR, cgroup_prepare, NULL, E (L ("cgroup"), L ("cgroup.*")),
    "the scope and its limits exist before the child does (it is born in it)" },
  { KIST_PHASE_PREPARE, CR, kist_mounts_idmap_prepare, NULL, E (C ("mounts")),
    "idmapped bind trees, made with the host's privilege (the init attaches them); records "
    "`mounts` only on a failure" },
  { KIST_PHASE_PREPARE, EX, cgroup_open, NULL, E (L ("cgroup")),
    "the container's scope (state.json), opened for the process to be born in" },

  /* ---- ENTER: the parent, after clone, while the child waits for GO. */
  { KIST_PHASE_ENTER, CR | EX, cgroup_join, NULL, E (L ("cgroup"), L ("cgroup.v1")),
    "joined: born in the scope by clone3, else moved through cgroup.procs; read back from "
    "/proc/PID/cgroup, with the v1 hierarchies it inherited on a hybrid host" },
  { KIST_PHASE_ENTER, CR, kist_idmap_apply, NULL, E (C ("idmap.uid"), C ("idmap.gid")),
    "uid_map, setgroups, gid_map of the waiting child, before it does anything" },
  { KIST_PHASE_ENTER, CR, kist_net_devices_apply, NULL, E (O ("net_devices")),
    "linux.netDevices, a grant: moved into the new network namespace (or the one joined by "
    "path) before the init's network.loopback counts its links; read back from outside" },

  /* ---- BESIDE: the parent, after GO, while the child does its SETUP. */
  { KIST_PHASE_BESIDE, CR, kist_cgroup_default_devices, NULL, E (L ("cgroup.devices")),
    "runc's default device rules (no linux.resources.devices): they let every mknod and "
    "every device the setup opens through, so the setup does not depend on when they are "
    "attached; loaded while the child works, before its READY is answered (configured rules: "
    "in PREPARE, with the scope)" },

  /* ---- SETUP: in the container (the init; exec's process from
   * `terminal` on). */
  { KIST_PHASE_SETUP, EX, kist_exec_cpu_affinity_initial, NULL, E (O ("exec_cpu_affinity")),
    "execCPUAffinity.initial, for the setup itself (records only a failure)" },
  { KIST_PHASE_SETUP, CR, kist_oom_apply, NULL, E (L ("oom_score_adj", kist_oom_verify)),
    "while the init has kist's credentials and /proc/self is still its own to write" },
  { KIST_PHASE_SETUP, CR, nondumpable, NULL, NULL,
    "no entry: before the init joins or creates anything (CVE-2016-9962)" },
  { KIST_PHASE_SETUP, CR | NM, kist_ns_apply, NULL,
    E (C ("fallback"), C ("namespace.user", kist_ns_verify), C ("namespace.mount", kist_ns_verify),
       C ("namespace.pid", kist_ns_verify), C ("namespace.net", kist_ns_verify),
       C ("namespace.uts", kist_ns_verify), C ("namespace.ipc", kist_ns_verify),
       C ("namespace.cgroup", kist_ns_verify), C ("namespace.time", kist_ns_verify)),
    "joins by path, the time namespace's offsets, every namespace read back; `fallback`: "
    "kist sandbox's Landlock fallback, which has no namespaces (sandbox_fallback.c)" },
  { KIST_PHASE_SETUP, CR | NM, kist_net_apply, NULL, E (C ("network.loopback", kist_net_verify)),
    "before the hooks, which may add links (docker's prestart moves eth0 in)" },
  { KIST_PHASE_SETUP, CR | NM, kist_rootfs_prepare, NULL, E (C ("rootfs.propagation"), C ("rootfs.bind")),
    NULL },
  { KIST_PHASE_SETUP, CR | NM, kist_mounts_apply, NULL, E (C ("mounts", kist_mounts_verify)),
    NULL },
  { KIST_PHASE_SETUP, CR | EX, kist_terminal_apply, NULL, E (O ("terminal")),
    "the pty of the container's devpts (mounted by now); /dev/console in the init only" },
  { KIST_PHASE_SETUP, CR | NM, kist_dev_apply, NULL, E (C ("dev", kist_dev_verify)),
    "last of the /dev work: a read-only /dev tmpfs goes read-only here" },
  { KIST_PHASE_SETUP, CR, kist_hooks_create_apply, NULL,
    E (O ("hooks.prestart"), O ("hooks.createRuntime"), O ("hooks.createContainer")),
    "prestart and createRuntime run by the parent while the init waits; createContainer in "
    "the container, before pivot_root" },
  { KIST_PHASE_SETUP, CR | NM, kist_rootfs_pivot, NULL, E (C ("rootfs.pivot_root", kist_rootfs_verify)), NULL },
  { KIST_PHASE_SETUP, CR | NM, kist_uts_apply, NULL, E (C ("hostname"), C ("domainname")), NULL },
  { KIST_PHASE_SETUP, CR | NM, kist_sysctl_apply, NULL, E (C ("sysctl")),
    "after pivot_root (the container's /proc/sys), before the read-only paths" },
  { KIST_PHASE_SETUP, CR | NM, kist_paths_apply, NULL,
    E (C ("masked_paths", kist_mounts_verify), C ("readonly_paths", kist_mounts_verify)), NULL },
  { KIST_PHASE_SETUP, CR | EX, kist_process_prepare, NULL, E (O ("cwd", kist_cwd_verify), C ("environment")),
    "cwd created before the root goes read-only; the executable resolved in the root" },
  { KIST_PHASE_SETUP, CR | NM, kist_rootfs_readonly, NULL, E (C ("rootfs.readonly", kist_rootfs_verify)), NULL },
  { KIST_PHASE_SETUP, CR | EX, kist_rlimits_apply, NULL,
    E (L ("rlimit"), L ("rlimit.*", kist_rlimits_verify)), NULL },
  { KIST_PHASE_SETUP, CR | EX, kist_io_priority_apply, NULL, E (O ("io_priority", kist_io_priority_verify)),
    "before the user switch and any filter" },
  { KIST_PHASE_SETUP, CR | EX, kist_scheduler_apply, NULL,
    E (O ("scheduler", kist_scheduler_verify)),
    "before the user switch (SCHED_FIFO needs CAP_SYS_NICE)" },
  { KIST_PHASE_SETUP, CR | EX, kist_personality_apply, NULL,
    E (O ("personality", kist_personality_verify)), NULL },
  { KIST_PHASE_SETUP, CR | EX, kist_memory_policy_apply, NULL, E (O ("memory_policy")), NULL },
  { KIST_PHASE_SETUP, CR | EX, kist_exec_cpu_affinity_apply, NULL,
    E (O ("exec_cpu_affinity", kist_exec_cpu_affinity_verify)),
    "final: the last step before any filter can deny setting or reading it (the user "
    "and capability rows after it leave it as it is); for the init: not applicable, says so" },
  { KIST_PHASE_SETUP, CR | EX, kist_session_apply, NULL, E (C ("session", kist_session_verify)),
    "setsid and the controlling terminal before any filter can deny them (TIOCSCTTY)" },
  { KIST_PHASE_SETUP, CR | EX, kist_seccomp_apply_early, NULL, E (C ("seccomp")),
    "here only without no_new_privileges: loading needs CAP_SYS_ADMIN, which the user switch "
    "and the capability sets take away (as runc)" },
  { KIST_PHASE_SETUP, CR | EX, kist_user_apply, NULL, E (C ("user", kist_user_verify)),
    "additionalGids, gid, uid, umask; capabilities kept for the next row" },
  { KIST_PHASE_SETUP, CR | EX, kist_caps_apply, NULL, E (C ("capabilities", kist_caps_verify)),
    NULL },
  { KIST_PHASE_SETUP, CR | EX, kist_nnp_apply, NULL,
    E (C ("no_new_privileges", kist_nnp_verify)), NULL },
  { KIST_PHASE_SETUP, CR | EX, kist_landlock_apply, NULL, E (C ("landlock")),
    "after no_new_privileges (landlock_restrict_self needs it without CAP_SYS_ADMIN), before "
    "any filter: its probes (mkdir, TCP bind, abstract unix connect) must reach the kernel" },
  { KIST_PHASE_SETUP, CR | EX, kist_seccomp_apply, NULL, E (C ("seccomp")),
    "here only a filter with a notify listener (its fd goes to the parent that still waits); "
    "every other one in START" },

  /* ---- START: in the container, the last steps before execve. */
  { KIST_PHASE_START, CR, kist_hooks_start_container, NULL, E (O ("hooks.startContainer")),
    "after `start`, in the container, before the process" },
  { KIST_PHASE_START, CR | EX, NULL, "kist_process_exec (process.c), after the rows above",
    E (O ("init", kist_init_verify), C ("parent_death_signal"), C ("fds", kist_fds_verify),
       C ("seccomp", kist_seccomp_verify), O ("exec")),
    "kist's init starts the command (sandbox, --init; a clone sharing its memory until the execve), the parent-death signal (sandbox), every fd kist holds closed, the filter "
    "last of all, READY, execve; "
    "`exec` is recorded by the caller when the close-on-exec connection closes" },

  /* ---- AFTER: kist, once the process runs or ended. */
  { KIST_PHASE_AFTER, CR, NULL, "kist start (hooks.c), after the execve", E (O ("hooks.poststart")),
    NULL },
  { KIST_PHASE_AFTER, SB, NULL, "kist sandbox (cmd_sandbox.c), while it waits",
    E (O ("timeout"), O ("signal"), O ("exit"), O ("usage")),
    "signal: SIGINT, SIGTERM, SIGHUP or SIGQUIT passed on; the scope killed after --grace; "
    "exit and usage: how the command ended (kist's init says), what it used (the scope)" },
  { KIST_PHASE_AFTER, CR, NULL, "kist delete (hooks.c), after the container is gone",
    E (O ("hooks.poststop")), NULL },
  { KIST_PHASE_AFTER, SB, NULL, "kist sandbox (cmd_sandbox.c), in its teardown", E (O ("workspace")),
    "--workspace: committed or discarded once every process is gone" },
  { KIST_PHASE_AFTER, SB, NULL, "kist sandbox (cmd_sandbox.c), at its end", E (O ("teardown")),
    "every process, the scope, the state and the workspace removed" },
};

const size_t kist_n_layers = KIST_ARRAY_SIZE (kist_layers);

const struct kist_layer_def *
kist_layer_next (const struct kist_layer_def *prev, enum kist_phase phase, unsigned op)
{
  const struct kist_layer_def *end = kist_layers + kist_n_layers;
  for (const struct kist_layer_def *d = prev ? prev + 1 : kist_layers; d < end; d++)
    if (d->phase == phase && (d->ops & op) && d->apply)
      return d;
  return NULL;
}

unsigned
kist_layer_step_of (enum kist_phase phase, const char *entry)
{
  for (size_t i = 0; i < kist_n_layers; i++)
    for (const struct kist_entry_def *e = kist_layers[i].entries;
         kist_layers[i].phase == phase && e && e->name; e++)
      if (strcmp (e->name, entry) == 0)
        return (unsigned) i + 1;
  return 0;
}

/* One row: its entries carry its number in the registry and its time. */
static int
layer_timed (const struct kist_layer_def *d, struct kist_ctx *ctx, struct kist_report *r,
             struct kist_error **err)
{
  size_t from = r ? r->n_layers : 0;
  int64_t t0 = kist_monotonic_usec ();
  int ret = ctx->fallback && (d->ops & KIST_NEEDS_MOUNT_NS) ? kist_fallback_row (ctx, d, r, err)
                                                              : d->apply (ctx, r, err);
  kist_report_time_step (r, from, (unsigned) (d - kist_layers) + 1, kist_monotonic_usec () - t0);
  return ret;
}

int
kist_layers_run (enum kist_phase phase, unsigned op, struct kist_ctx *ctx, struct kist_report *r,
                 size_t *sent, struct kist_error **err)
{
  /* The entries are held in the outbox (sync.h) and go to the parent in one
   * BATCH right before the next packet this process sends: every wait for
   * the parent (the hooks' GO, READY), the seccomp listener and pty fds, the
   * error of a failed layer, the READY before the execve.  That is a few
   * sendmsg/recvmsg and wake-ups per run instead of one pair per entry.
   * The trade-off: a setup process killed from outside (SIGKILL, the OOM
   * killer) between two such points loses the entries held since the last
   * one, and the parent names the last entry it received (init_end,
   * container.c), i.e. the row before the last wait point, not the exact
   * row it died in.  A layer that fails flushes at once below (its
   * entry and its error always arrive). */
  kist_sync_outbox (ctx->sync_fd, r, sent);
  for (const struct kist_layer_def *d = NULL; (d = kist_layer_next (d, phase, op));)
    {
      int ret = layer_timed (d, ctx, r, err);
      if (ret < 0)
        {
          if (kist_sync_flush () < 0)
            _exit (KIST_EXIT_FAILURE); /* the parent is gone: nobody to tell */
          return ret;
        }
    }
  return 0;
}

int
kist_layers_run_parent (enum kist_phase phase, unsigned op, struct kist_ctx *ctx,
                        struct kist_report *r, struct kist_error **err)
{
  for (const struct kist_layer_def *d = NULL; (d = kist_layer_next (d, phase, op));)
    if (layer_timed (d, ctx, r, err) < 0)
      return -1;
  return 0;
}

/* Does NAME equal the entry, or (a family "P.*") start with "P." and go on? */
static bool
entry_matches (const char *entry, const char *name)
{
  size_t el = strlen (entry);
  if (el >= 2 && entry[el - 1] == '*' && entry[el - 2] == '.')
    return strncmp (name, entry, el - 1) == 0 && name[el - 1] != '\0';
  return strcmp (name, entry) == 0;
}

/* The entries by name, built once per process (entry_find runs for every
 * report row, two or three times, in the parent and the setup child: a scan
 * of the whole registry per row was 0.3 ms a run, a binary search with
 * strcmp still ~40 us): the exact names in an open-addressing hash table
 * (the first of equal names, as in the registry), and the families ("P.*")
 * in registry order, asked only when no exact name matches. */
static struct
{
  const struct kist_entry_def **slot; /* n_slot, a power of two */
  uint32_t *hash;
  size_t n_slot;
  const struct kist_entry_def **family;
  size_t n_family;
} entry_index;

static bool
entry_is_family (const char *name)
{
  size_t l = strlen (name);
  return l >= 2 && name[l - 1] == '*' && name[l - 2] == '.';
}

/* FNV-1a. */
static uint32_t
name_hash (const char *s)
{
  uint32_t h = 2166136261u;
  for (; *s; s++)
    h = (h ^ (unsigned char) *s) * 16777619u;
  return h;
}

static void
entry_index_build (void)
{
  size_t n = 0;
  for (size_t i = 0; i < kist_n_layers; i++)
    for (const struct kist_entry_def *e = kist_layers[i].entries; e && e->name; e++)
      n++;
  size_t n_slot = 16;
  while (n_slot < 2 * n)
    n_slot *= 2;
  entry_index.slot = xcalloc (n_slot, sizeof *entry_index.slot);
  entry_index.hash = xcalloc (n_slot, sizeof *entry_index.hash);
  entry_index.family = xcalloc (n + 1, sizeof *entry_index.family);
  entry_index.n_slot = n_slot;
  for (size_t i = 0; i < kist_n_layers; i++)
    for (const struct kist_entry_def *e = kist_layers[i].entries; e && e->name; e++)
      {
        if (entry_is_family (e->name))
          {
            entry_index.family[entry_index.n_family++] = e;
            continue;
          }
        uint32_t h = name_hash (e->name);
        size_t k = h & (n_slot - 1);
        while (entry_index.slot[k] && !(entry_index.hash[k] == h
                                        && strcmp (entry_index.slot[k]->name, e->name) == 0))
          k = (k + 1) & (n_slot - 1);
        if (entry_index.slot[k] == NULL) /* a name seen before keeps its first entry */
          {
            entry_index.slot[k] = e;
            entry_index.hash[k] = h;
          }
      }
}

static const struct kist_entry_def *
entry_find (const char *name)
{
  if (name == NULL)
    return NULL;
  if (entry_index.slot == NULL)
    entry_index_build ();
  /* An exact entry wins over a family ("cgroup" is not "cgroup.*"). */
  uint32_t h = name_hash (name);
  for (size_t k = h & (entry_index.n_slot - 1); entry_index.slot[k];
       k = (k + 1) & (entry_index.n_slot - 1))
    if (entry_index.hash[k] == h && strcmp (entry_index.slot[k]->name, name) == 0)
      return entry_index.slot[k];
  for (size_t i = 0; i < entry_index.n_family; i++)
    if (entry_matches (entry_index.family[i]->name, name))
      return entry_index.family[i];
  return NULL;
}

bool
kist_layer_known (const char *name)
{
  return entry_find (name) != NULL;
}

enum kist_group
kist_layer_group (const char *name)
{
  const struct kist_entry_def *e = entry_find (name);
  return e ? e->group : KIST_GROUP_OTHER;
}

void
kist_layer_vocabulary (void (*fn) (const char *name, enum kist_group group, void *arg), void *arg)
{
  for (size_t i = 0; i < kist_n_layers; i++)
    for (const struct kist_entry_def *e = kist_layers[i].entries; e && e->name; e++)
      {
        bool seen = false;
        for (size_t j = 0; j <= i && !seen; j++)
          for (const struct kist_entry_def *f = kist_layers[j].entries; f && f->name && f != e; f++)
            if (strcmp (f->name, e->name) == 0)
              {
                seen = true;
                break;
              }
        if (!seen)
          fn (e->name, e->group, arg);
      }
}

void
kist_layer_verifiers (void (*fn) (kist_layer_fn verify, const char *name, void *arg), void *arg)
{
  /* Each verifier once, at its first entry, in table order: found once per
   * process (a sandbox verifies three or four times). */
  static const struct kist_entry_def **first;
  static size_t n_first;
  if (first == NULL)
    {
      size_t n = 0;
      for (size_t i = 0; i < kist_n_layers; i++)
        for (const struct kist_entry_def *e = kist_layers[i].entries; e && e->name; e++)
          n++;
      first = xcalloc (n + 1, sizeof *first);
      for (size_t i = 0; i < kist_n_layers; i++)
        for (const struct kist_entry_def *e = kist_layers[i].entries; e && e->name; e++)
          {
            /* One verifier may serve several entries (namespace.*, rootfs.*). */
            bool named_before = false;
            for (size_t k = 0; k < n_first && !named_before; k++)
              named_before = first[k]->verify == e->verify;
            if (e->verify && !named_before)
              first[n_first++] = e;
          }
    }
  for (size_t k = 0; k < n_first; k++)
    fn (first[k]->verify, first[k]->name, arg);
}
