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

struct kist_globals;
struct kist_seccomp;

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
  bool exact_env;                /* kist sandbox: the environment is exactly process.env
                                    (no HOME added from /etc/passwd) */
  bool start_ack;                /* init: the start client prints the report at READY and
                                    acknowledges it; wait for that before execve */
  const char *pid_file;          /* --pid-file */
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
    dev_t host_dev;              /* the host's devpts device, 0 if unknown */
  } tty;

  /* Namespaces of the parent (the host), captured before clone, so that the
   * child can prove a namespace is new by comparing inode numbers. */
  dev_t host_ns_dev[KIST_NS_COUNT];
  ino_t host_ns_ino[KIST_NS_COUNT];
  bool userns;                   /* the container has its own (new or joined) user namespace */

  /* Child side: what process.c prepared for the final execve. */
  char *exec_path;               /* resolved inside the container root */
  int exec_fd;                   /* O_PATH fd of exec_path (openat2, no magic links), or -1 */
  char **envp;                   /* exactly process.env */

  int sync_fd;                   /* parent <-> child SOCK_SEQPACKET */
  int start_fd;                  /* listening socket the init accepts `start` on */
  pid_t pid;                     /* parent side: the init's host pid */
  int state_dirfd;               /* parent side: ROOT/ID */
  struct kist_seccomp *seccomp;  /* prepared in the parent before clone (seccomp.h), NULL: none */
};

/* A layer's entry point: apply it and record its report entries (design.md
 * section 2); a negative value with *err when it could not be applied. */
typedef int (*kist_layer_fn) (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);

/* ---- Layers.  One file each; every entry point records its report
 * entries (design.md section 2).  The comment says which process calls it. */

/* idmap.c (parent, while the child waits): uid_map, setgroups, gid_map of ctx->pid. */
int kist_idmap_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* ns.c (child, first): join namespaces given by path, create the time
 * namespace with its offsets, verify every namespace.* against the host's. */
int kist_ns_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* rootfs.c (child): rootfs.propagation and the bind of root.path (sets ctx->rootfs_fd). */
int kist_rootfs_prepare (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* mounts.c (child): every entry of config.mounts, resolved inside ctx->rootfs_fd. */
int kist_mounts_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
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
/* seccomp.c (child, last of the layers): only a profile with a notify
 * listener, whose fd must reach the parent that is still waiting; every
 * other filter is loaded by kist_seccomp_apply_last. */
int kist_seccomp_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* seccomp.c (kist_process_exec, right before execve): the filter, if not loaded yet. */
int kist_seccomp_apply_last (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);

#endif
