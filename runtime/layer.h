/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: what every isolation layer stands on: the context of one container
 * operation, the layer entry point's signature, and the entry points
 * themselves (one file each; the order they run in is the registry's,
 * layer.c). */
#ifndef KIST_LAYER_H
#define KIST_LAYER_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "report.h"
#include "spec.h"

struct kist_cgroup;
struct kist_globals;
struct kist_landlock_rules;
struct kist_net_devices;
struct kist_seccomp;
struct kist_verify_cache;
struct kist_sandbox_fallback;

/* Everything one container operation works on.  Built by the command, used by
 * the parent side and (after clone, in its own copy) by the container init. */
struct kist_ctx
{
  const struct kist_globals *g;
  const char *id;
  struct kist_spec *spec;        /* owned by the caller */
  char *bundle;                  /* absolute */
  int bundle_fd;                 /* O_DIRECTORY */
  char *rootfs;                  /* absolute host path of root.path (resolved against bundle) */
  int rootfs_fd;                 /* child: the bind mount of the root (valid after pivot_root) */
  int dev_ro_fd;                 /* child: a read-only /dev tmpfs, mounted writable until the
                                    dev layer has filled it (mounts.c -> dev.c), or -1 */
  bool no_pivot;                 /* --no-pivot: MS_MOVE + chroot */
  bool no_new_keyring;           /* accepted (runc flag); kist never creates a session keyring */
  int preserve_fds;              /* --preserve-fds N: fds 3..3+N-1 are passed on */
  const char *console_socket;    /* --console-socket */
  bool die_with_parent;          /* kist sandbox: keep PR_SET_PDEATHSIG through exec */
  bool with_init;                /* kist sandbox: kist's init stays PID 1, the command is
                                    its child (init.c) */
  int init_status_fd;            /* with_init: where the init writes how the command
                                    ended (kist_init_status_parse), or -1 */
  uint64_t sig_not_default;      /* with_init: the signals kist's process had ignored or
                                    caught before the clone (SigIgn | SigCgt, bit N-1 for
                                    signal N); all ones when unknown */
  bool exact_env;                /* kist sandbox: the environment is exactly process.env
                                    (no HOME added from /etc/passwd) */
  const struct kist_landlock_rules *landlock; /* kist sandbox: the Landlock rules (landlock.h),
                                                 NULL: not requested */
  /* kist sandbox --fallback landlock (sandbox_fallback.c): no namespaces; the
   * registry's rows marked KIST_NEEDS_MOUNT_NS are not run but recorded as
   * kist_fallback_row says.  NULL: a normal create. */
  const struct kist_sandbox_fallback *fallback;
  const char *pid_file;          /* --pid-file */
  bool start_at_ready;           /* run, sandbox (opts.created): the init goes on into
                                    its START rows right after its create's READY, without
                                    waiting for the commit and START; it clears its
                                    parent-death signal in kist_process_exec */
  bool detach;
  /* process.terminal (terminal.c): the child keeps the slave until the
   * exec, the parent receives the master. */
  struct
  {
    int slave;                   /* child: the pty slave (TIOCGPTPEER), -1 if none */
    int index;                   /* child: N of /dev/pts/N */
    int master;                  /* parent: the master the child sent, -1 if none */
    bool sent;                   /* parent: it went to --console-socket */
    bool console;                /* bind /dev/console from the pty (the init, not exec) */
    bool relay;                  /* parent: kist relays the terminal (run/exec in the
                                    foreground), without --console-socket */
    dev_t host_dev;              /* the host's devpts device, 0 if unknown */
  } tty;

  /* Namespaces of the parent (the host), captured before clone, so that the
   * child can prove a namespace is new by comparing inode numbers (all on
   * the one nsfs: kist_ns_ino); 0 where the kernel lacks the type. */
  uint64_t host_ns_ino[KIST_NS_COUNT];
  bool userns;                   /* the container has its own (new or joined) user namespace */

  /* Child side: what process.c prepared for the final execve. */
  char *exec_path;               /* resolved inside the container root */
  int exec_fd;                   /* O_PATH fd of exec_path (openat2, no magic links), or -1 */
  char **envp;                   /* exactly process.env */

  int sync_fd;                   /* parent <-> child SOCK_SEQPACKET */
  int start_fd;                  /* listening socket the init accepts `start` on */
  pid_t pid;                     /* parent side: the init's host pid */
  int state_dirfd;               /* parent side: ROOT/ID */
  int root_fd;                   /* parent side: the state root (ROOT), for the seccomp cache */
  struct kist_cgroup *cgroup;    /* parent side: the scope (cgroup.h), NULL: none */
  bool cgroup_born_in;           /* parent side: clone3 put the child in it (CLONE_INTO_CGROUP) */
  const char *cgroup_path;       /* exec: the container's scope (state.json), NULL: none */
  struct kist_seccomp *seccomp;  /* chosen and parsed at load (kist_seccomp_choose), prepared in
                                  * the parent before clone (seccomp.h), NULL: none */
  /* Child: what the read-backs inside need from the container's proc,
   * opened before any seccomp filter and the privilege drop, so that they
   * never need an open the filter may deny (seccomp.h kist_inside_status):
   * /proc/self/status (fd >= 0, else errnum) and /proc/self/setgroups. */
  struct
  {
    bool tried;
    int fd;
    int errnum;
    int setgroups;               /* 1: "allow", 2: "deny", 0: unknown */
  } inside_status;
  /* Parent: what kist_verify_outside read of the waiting process, once
   * (verify.c); NULL outside it. */
  struct kist_verify_cache *verify_cache;
  /* Parent -> child: the idmapped bind trees, made before clone (the child,
   * in its own user namespace, has no privilege over host filesystems),
   * one per config.mounts entry; NULL when there are none
   * (mounts_idmap.c; the child attaches them in mounts.c).  Their fds
   * travel in idmap_sock (valid only when idmap_trees is set): the parent
   * queued them there (SCM_RIGHTS) and closed its own; the init keeps that
   * one socket through its close of inherited fds and takes them out in
   * the mounts layer. */
  struct kist_idmap_tree *idmap_trees;
  size_t n_idmap_trees;
  int idmap_sock;
  /* Parent (create): the devices of linux.netDevices moved into the
   * container (net.h), NULL: none requested. */
  struct kist_net_devices *net_devices;
};

struct kist_idmap_tree
{
  int fd;                        /* the detached tree (open_tree + MOUNT_ATTR_IDMAP), or -1;
                                    the init: once received from idmap_sock */
  char *why;                     /* -1 with --allow-degraded mounts: why it was not made */
  uint32_t uid, gid;             /* the owner of its root as the host sees it (mapped) */
};

/* An annotation in which the caller explains the id maps it chose (kist
 * sandbox); the idmap layer adds it to its entries' detail. */
#define KIST_IDMAP_NOTE_ANNOTATION "run.kist.sandbox.idmap"

/* A layer's entry point: apply it and record its report entries (design.md
 * section 2); a negative value with *err when it could not be applied. */
typedef int (*kist_layer_fn) (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);

/* ---- Layers.  One file each; every entry point records its report
 * entries (design.md section 2).  The comment says which process calls it. */

/* idmap.c (parent, while the child waits): uid_map, setgroups, gid_map of ctx->pid. */
int kist_idmap_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* net_devices.c (parent, while the child waits): linux.netDevices moved into
 * the container's network namespace (ctx->net_devices says which). */
int kist_net_devices_apply (struct kist_ctx *ctx, struct kist_report *r,
                            struct kist_error **err);
/* ns.c (child, first): join namespaces given by path, create the time
 * namespace with its offsets, verify every namespace.* against the host's. */
int kist_ns_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* rootfs.c (child): rootfs.propagation and the bind of root.path (sets ctx->rootfs_fd). */
int kist_rootfs_prepare (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* mounts_idmap.c (parent, before clone): the idmapped bind trees of
 * config.mounts (ctx->idmap_trees); records "mounts" only on a failure. */
int kist_mounts_idmap_prepare (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* mounts_idmap.c: the fd the init must keep open until its mounts layer
 * (ctx->idmap_sock), or -1. */
int kist_mounts_idmap_keep_fd (const struct kist_ctx *ctx);
/* mounts_idmap.c (the init, mounts layer): the trees' fds out of idmap_sock. */
int kist_mounts_idmap_receive (struct kist_ctx *ctx, struct kist_error **err);
/* mounts_idmap.c: close and free what is left of ctx->idmap_trees and
 * idmap_sock (the parent once the init is cloned; the init after the
 * mounts layer). */
void kist_mounts_idmap_release (struct kist_ctx *ctx);
/* mounts.c (child): every entry of config.mounts, resolved inside ctx->rootfs_fd. */
int kist_mounts_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* dev.c (parent, verify_view.c): every node /dev was to get, resolved in
 * rootfd (the process's root from outside), is that device; NULL and
 * *n_checked, else why not (newly allocated). */
char *kist_dev_disagrees (const struct kist_spec *spec, int rootfd, size_t *n_checked);
/* dev.c (child): the default /dev nodes and symlinks plus linux.devices. */
int kist_dev_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* rootfs.c (child): pivot_root (or chroot with --no-pivot) and detach the old root. */
int kist_rootfs_pivot (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* uts.c (child): hostname, domainname. */
int kist_uts_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* sysctl.c (child, after pivot, before readonly paths): linux.sysctl. */
int kist_sysctl_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* net.c (child): bring lo UP in a new netns, verify only lo exists. */
int kist_net_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* paths.c (child, after pivot): maskedPaths and readonlyPaths. */
int kist_paths_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* rootfs.c (child, after paths): root.readonly. */
int kist_rootfs_readonly (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* rlimits.c (child): process.rlimits. */
int kist_rlimits_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* process.c (child, first, while the process is still dumpable and has
 * kist's credentials): oomScoreAdj. */
int kist_oom_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* process.c (child): cwd, environment, the executable lookup (ctx->exec_fd). */
int kist_process_prepare (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* sched.c (child, before user and seccomp): process.ioPriority (ioprio_set /
 * ioprio_get of the process itself). */
int kist_io_priority_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* sched.c (child, before user and seccomp): process.scheduler (sched_setattr /
 * sched_getattr). */
int kist_scheduler_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* sched.c (exec's process, first): process.execCPUAffinity.initial, for the
 * setup inside the container; records only a failure. */
int kist_exec_cpu_affinity_initial (struct kist_ctx *ctx, struct kist_report *r,
                                    struct kist_error **err);
/* sched.c (last before kist_process_exec): process.execCPUAffinity.final in
 * exec (the cpuset's CPUs when omitted); in the init: not applicable, says so. */
int kist_exec_cpu_affinity_apply (struct kist_ctx *ctx, struct kist_report *r,
                                  struct kist_error **err);
/* personality.c (child, before user and seccomp): linux.personality. */
int kist_personality_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* personality.c (child, before user and seccomp): linux.memoryPolicy
 * (set_mempolicy / get_mempolicy). */
int kist_memory_policy_apply (struct kist_ctx *ctx, struct kist_report *r,
                              struct kist_error **err);
/* process.c (child): user (additionalGids, gid, uid, umask), keeping capabilities. */
int kist_user_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* caps.c (child, after user): the five capability sets. */
int kist_caps_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* process.c (child, after caps): no_new_privileges. */
int kist_nnp_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* landlock.c (child, after no_new_privileges, before the seccomp rows):
 * ctx->landlock restricted onto the process and proven in force by probes. */
int kist_landlock_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* init.c (child, first of kist_process_exec): with ctx->with_init, start
 * the command (clone CLONE_VM | CLONE_VFORK, on a stack of its own), which
 * runs rest (rest_arg): the last layers and the execve.  The calling
 * process stays as PID 1 (forwards signals, reaps, exits with the command's
 * status) and never returns, unless the command exited before its execve:
 * then -1 with its error in *err (the caller sends it).  Without an init: 0,
 * and the caller runs rest itself. */
int kist_init_fork (struct kist_ctx *ctx, struct kist_report *r, int (*rest) (void *),
                    void *rest_arg, struct kist_error **err);
/* init.c (parent, at READY): the pid to verify from outside: the command
 * under kist's init when r has the init entry pending, else init itself;
 * < 0 with *err. */
pid_t kist_init_command_pid (pid_t init, const struct kist_report *r, struct kist_error **err);
/* init.c: as a child subreaper (or the parent of everything to end): SIGKILL
 * every child of this process and reap it, again until none is left (the
 * orphans of the killed ones come to it); the wait status of watch, if it
 * was among them, in *wstatus.  The rounds it took, or -errno when its
 * children cannot be read (/proc/self/task/TID/children). */
int kist_kill_children (pid_t watch, int *wstatus);
/* What kist's init wrote to ctx->init_status_fd when the command ended. */
struct kist_init_status
{
  bool known;                    /* the init wrote it (not killed first) */
  int wstatus;                   /* the command's wait status */
  long long utime_us, stime_us;  /* getrusage(RUSAGE_CHILDREN) of the init: the command */
  long maxrss_kb;                /* and every descendant it reaped */
};
/* Read it (non-blocking: the init may have been killed before writing). */
void kist_init_status_read (int fd, struct kist_init_status *s);
/* process.c (child, before any filter): a new session, the controlling terminal. */
int kist_session_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* seccomp.c (child, last of the layers): only a profile with a notify
 * listener, whose fd must reach the parent that is still waiting; every
 * other filter is loaded by kist_seccomp_apply_last. */
int kist_seccomp_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* seccomp.c (kist_process_exec, right before execve): the filter, if not loaded yet. */
int kist_seccomp_apply_last (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);

/* ---- The registry (layer.c): every layer of every operation, in order. */

/* When a layer runs, in the order an operation goes through them. */
enum kist_phase
{
  KIST_PHASE_PREPARE, /* parent, before clone: refuse, compile, make the scope */
  KIST_PHASE_ENTER,   /* parent, after clone, the child waiting: scope join, id maps */
  KIST_PHASE_BESIDE,  /* parent, after GO, while the child does its SETUP (nothing it
                         does depends on these rows; no READY is answered before them) */
  KIST_PHASE_SETUP,   /* in the container: the init (create) or the process (exec) */
  KIST_PHASE_START,   /* in the container, last: the init after `start`, the exec'd
                         process after its setup; ends in execve */
  KIST_PHASE_AFTER,   /* kist, once the process runs or ended */
  KIST_PHASE_COUNT
};

/* Which operations run a row (a mask). */
#define KIST_FOR_CREATE 1u  /* create, run (the container init) */
#define KIST_FOR_EXEC 2u    /* exec (a process joining a running container) */
#define KIST_FOR_SANDBOX 4u /* kist sandbox only (it creates through create, too) */
/* Not an operation: a row that needs the container's own mount namespace (or
 * another namespace), which the Landlock fallback of kist sandbox does not
 * have (ctx->fallback): kist_layers_run records its entries through
 * kist_fallback_row instead of running it. */
#define KIST_NEEDS_MOUNT_NS 8u

/* A report entry a row records: its name ("rlimit.*" is the family of every
 * "rlimit.NAME"), its group, and how the parent verifies it from outside
 * (verify.c, at the READY barrier, on the waiting process's /proc/PID), or
 * NULL where only the layer's own read-back inside tells.  An entry that
 * appears in several rows (seccomp) names its verifier once, in the row that
 * applies it last; one verifier may serve several entries. */
struct kist_entry_def
{
  const char *name;
  enum kist_group group;
  kist_layer_fn verify;
};

struct kist_layer_def
{
  enum kist_phase phase;
  unsigned ops;                        /* KIST_FOR_* */
  kist_layer_fn apply;                 /* NULL: recorded by `by`, outside the loops */
  const char *by;                      /* who records it when apply is NULL */
  const struct kist_entry_def *entries; /* NULL-terminated; NULL: records none */
  const char *order;                   /* why it stands where it stands, or NULL */
};

extern const struct kist_layer_def kist_layers[];
extern const size_t kist_n_layers;

/* The rows of PHASE that OP runs, in order: start with prev = NULL. */
const struct kist_layer_def *kist_layer_next (const struct kist_layer_def *prev,
                                              enum kist_phase phase, unsigned op);

/* The 1-based number of the first row of PHASE that lists ENTRY (the
 * report's "step"), 0 if none: for a row recorded outside the loops
 * (kist_process_exec), which times itself. */
unsigned kist_layer_step_of (enum kist_phase phase, const char *entry);

/* In the container (SETUP): every row of PHASE for OP; the entries (from
 * *sent on) are held in the sync outbox (sync.h, kist_sync_outbox) and sent
 * to the parent over ctx->sync_fd in one batch before the next packet the
 * process sends (r and sent stay in the outbox: they must outlive it).  A
 * negative value with *err when a layer failed (its entries sent already,
 * the caller sends the error); the process exits when the parent is gone. */
int kist_layers_run (enum kist_phase phase, unsigned op, struct kist_ctx *ctx,
                     struct kist_report *r, size_t *sent, struct kist_error **err);

/* sandbox_fallback.c: the entries of row d, not run in the Landlock fallback
 * (ctx->fallback): a namespace the sandbox would have had is requested and
 * not applied (allowed to degrade by the caller: else the error), every
 * other entry not requested, each saying why. */
int kist_fallback_row (struct kist_ctx *ctx, const struct kist_layer_def *d, struct kist_report *r,
                       struct kist_error **err);

/* In the parent (PREPARE, ENTER): every row of PHASE for OP, in order; stops
 * at the first that fails. */
int kist_layers_run_parent (enum kist_phase phase, unsigned op, struct kist_ctx *ctx,
                            struct kist_report *r, struct kist_error **err);

/* The verifiers of the table's entries, in table order, each once (name:
 * the first entry that names it). */
void kist_layer_verifiers (void (*fn) (kist_layer_fn verify, const char *name, void *arg),
                           void *arg);

/* Is NAME a report entry of the registry (exactly, or in a family)? */
bool kist_layer_known (const char *name);

/* Every entry name of the registry, once each, in table order ("rlimit.*" for
 * a family); the group of each. */
void kist_layer_vocabulary (void (*fn) (const char *name, enum kist_group group, void *arg),
                            void *arg);

#endif
