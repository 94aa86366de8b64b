/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the container lifecycle and the context every layer works on. */
#ifndef KIST_CONTAINER_H
#define KIST_CONTAINER_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "report.h"
#include "spec.h"
#include "state.h"

/* Global options (runc-compatible, before the subcommand). */
struct kist_globals
{
  const char *root;        /* --root */
  const char *log;         /* --log */
  bool log_json;           /* --log-format json */
  bool debug;              /* --debug */
  bool systemd_cgroup;     /* --systemd-cgroup: refused until implemented */
  const char *allow_degraded; /* --allow-degraded LIST: added to every command's own policy */
};

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

/* Lifecycle (container.c).  Each fills the report (r) where it makes one. */

/* start: the init's last entries go into r (NULL: the stored report only);
 * on_ready (may be NULL) is called with them once the init is about to
 * execve (run and sandbox print --report - there, before the container's
 * own output). */
typedef void (*kist_start_ready_fn) (const struct kist_report *r, void *arg);
int kist_container_start (int rootfd, const char *id, struct kist_report *r_or_null,
                          kist_start_ready_fn on_ready, void *arg, struct kist_error **err);

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

/* process.c: close every fd above 2 but the --preserve-fds range and keep[]. */
int kist_close_fds_except (int preserve_fds, const int *keep, size_t n_keep,
                           struct kist_error **err);
/* process.c: the end of every container process (the init after start, an
 * exec'd process): a new session (layer "session"), every fd kist holds
 * closed but stdio, --preserve-fds and ctx->sync_fd, the seccomp filter
 * (kist_seccomp_apply_last), the entries sent over ctx->sync_fd (from
 * *sent on), READY, and execve of ctx->exec_fd.  Returns only on failure
 * (the error is not sent: the caller does). */
int kist_process_exec (struct kist_ctx *ctx, struct kist_report *r, size_t *sent,
                       struct kist_error **err);
/* unsupported.c (parent, before clone): everything requested that kist does
 * not implement (apparmor, selinux, intelRdt, ...), recorded and refused. */
int kist_unsupported_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);


/* ---- Operations used by the commands (container.c). */
struct kist_create_opts
{
  const char *id;
  const char *bundle;            /* NULL: current directory */
  const char *operation;         /* "create" or "run" */
  const char *pid_file;
  const char *console_socket;
  const char *report_path;       /* --report PATH|- */
  int report_fd;                 /* --report-fd N, -1 if none */
  const char *allow_degraded;    /* --allow-degraded csv or NULL */
  int preserve_fds;
  bool no_pivot, no_new_keyring;
  /* kist sandbox: the config built in memory (NULL: read BUNDLE/config.json),
   * and an init that dies with the kist process that made it, also after
   * start (PR_SET_PDEATHSIG, set again right before execve). */
  const char *config_json;
  size_t config_len;
  bool die_with_parent;
  bool exact_env;                /* kist sandbox: no HOME added to process.env */
  int64_t deadline;              /* unix seconds recorded in state.json, 0 = none */
  bool report_at_start;          /* run: write --report/--report-fd after start's
                                    entries (kist_create writes it only on failure) */
  int *pty_master;               /* run in the foreground: receives the pty master of
                                    process.terminal without --console-socket (-1 if
                                    none); NULL: kist create, which detaches */
};

/* Create a container and leave its init waiting for start.  The report is
 * returned in *report (also on failure, when one was started) and written to
 * --report / --report-fd / the state dir. */
int kist_create (const struct kist_globals *g, const struct kist_create_opts *o, pid_t *pid,
                 struct kist_report **report, struct kist_error **err);
/* Write the report to the places the options name (state dir copy separately). */
int kist_create_write_report (const struct kist_create_opts *o, const struct kist_report *r,
                              struct kist_error **err);
int kist_container_kill (int rootfd, const char *id, int sig, bool all, struct kist_error **err);
int kist_container_delete (int rootfd, const char *id, bool force, struct kist_error **err);
/* Signal name or number -> number ("TERM", "SIGTERM", "15", "0": no signal,
 * the liveness probe); -1 if unknown. */
int kist_parse_signal (const char *s);

/* Forward HUP INT QUIT TERM USR1 USR2 WINCH CONT to pid (run, sandbox). */
void kist_forward_signals (pid_t pid);
/* Wait for our child pid: its exit status (128+N for signal N), or
 * KIST_WAIT_TIMEOUT when timeout_ms (>= 0) passed first (not reaped then),
 * or a negative value with *err. */
#define KIST_WAIT_TIMEOUT 1000
int kist_wait_status (pid_t pid, int timeout_ms, struct kist_error **err);

/* In a process about to execve: keep fds 3..3+preserve_fds-1 open across
 * exec, mark everything above close-on-exec. */
int kist_prepare_exec_fds (int preserve_fds, struct kist_error **err);
/* The config's annotations as a JSON object (state.json; the hooks' state). */
char *kist_annotations_json (const struct kist_spec *s);
/* --pid-file: the pid in decimal, written atomically. */
int kist_write_pid_file (const char *file, pid_t pid, struct kist_error **err);

#endif
