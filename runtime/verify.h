/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: apply inside, verify outside (issue 10; design.md section 2, step 3).
 *
 * A layer that runs in the container records what it set: an applied entry
 * with an expectation (report.h kist_report_expect), "key=value ..." in the
 * layer's own words.  The parent receives it as pending (not applied) and,
 * at the READY barrier (create: collect_init; start: collect_start; exec: its
 * collect loop), while the process waits for its word before execve, reads
 * what the kernel says from outside: /proc/PID/status, stat, limits,
 * oom_score_adj, uid_map and gid_map of the waiting process.  Only what
 * agrees becomes applied; anything else fails (closed, unless
 * --allow-degraded names the layer).  Nothing the container's own
 * configuration does (its seccomp filter, its dropped capabilities, its user)
 * can keep the parent from reading these files.
 *
 * One verifier per entry, named in the registry (layer.c: the entry's
 * verify column), with the layer signature; ctx->pid is the waiting process
 * (host pid).  Each handles the entries of its layer that are pending, and
 * cross-checks the applied ones whose fact is visible outside. */
#ifndef KIST_VERIFY_H
#define KIST_VERIFY_H

#include <sys/types.h>

#include "layer.h"

/* Every verifier below on pid (ctx->pid is restored afterwards), each file
 * read once; then an entry still pending (no verifier took it) fails.  After
 * a failure, every entry still pending is marked not verified.  Returns 0,
 * or a negative value with *err (fail closed). */
int kist_verify_outside (struct kist_ctx *ctx, pid_t pid, struct kist_report *r,
                         struct kist_error **err);

/* init: the command's parent is PID 1 of its pid namespace (kist's init),
 * the command is not, and it leads its own session. */
int kist_init_verify (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* namespace.*: /proc/PID/ns/NAME is the namespace the container read back
 * inside, the joined path's, or (new) not kist's own; a new pid namespace
 * makes the process pid 1 (NSpid of /proc/PID/status). */
int kist_ns_verify (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* rootfs.pivot_root: /proc/PID/root is the rootfs (root.path's inode) and
 * the mount the init found at /; rootfs.readonly: that mount is read-only. */
int kist_rootfs_verify (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* mounts, masked_paths, readonly_paths: every mount the layer made is in
 * /proc/PID/mountinfo with the flags and type it read back (mountinfo.h). */
int kist_mounts_verify (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* dev: every node /dev was to get is that device in /proc/PID/root. */
int kist_dev_verify (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* cwd: /proc/PID/cwd is process.cwd resolved in /proc/PID/root. */
int kist_cwd_verify (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* network.loopback: /proc/PID/net/dev lists lo, and it is up (127.0.0.1's
 * local route in /proc/PID/net/fib_trie). */
int kist_net_verify (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* In their layer files, which share the read with the read-back inside:
 * io_priority (ioprio_get of PID), scheduler (sched_getattr of PID),
 * exec_cpu_affinity (sched_getaffinity of PID): sched.c; personality
 * (/proc/PID/personality): personality.c. */
int kist_io_priority_verify (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
int kist_scheduler_verify (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
int kist_exec_cpu_affinity_verify (struct kist_ctx *ctx, struct kist_report *r,
                                   struct kist_error **err);
int kist_personality_verify (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* oom_score_adj: /proc/PID/oom_score_adj is the value set. */
int kist_oom_verify (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* rlimit.*: /proc/PID/limits shows each applied soft:hard pair. */
int kist_rlimits_verify (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* user: Uid, Gid (real, effective, saved, fs), Groups and Umask of
 * /proc/PID/status, the container's ids mapped through /proc/PID/uid_map and
 * gid_map into the parent's view. */
int kist_user_verify (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* capabilities: CapBnd, CapEff, CapPrm, CapInh, CapAmb of /proc/PID/status. */
int kist_caps_verify (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* no_new_privileges: NoNewPrivs of /proc/PID/status. */
int kist_nnp_verify (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* seccomp: Seccomp (2) and Seccomp_filters of /proc/PID/status. */
int kist_seccomp_verify (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* session: NSsid equals NSpid in /proc/PID/status (a session leader) and
 * tty_nr of /proc/PID/stat is the container's pty (0: none). */
int kist_session_verify (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* fds: nothing above 2 + --preserve-fds open without close-on-exec
 * (/proc/PID/fd, fdinfo flags). */
int kist_fds_verify (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);

/* An entry as the parent receives it (sync.c): one the parent verifies
 * from outside is pending from now on (report.h kist_layer_make_pending),
 * those the child marked with an expectation and every applied rlimit.*
 * (the child read it back with getrlimit; the parent reads /proc/PID/limits). */
void kist_verify_received (struct kist_layer *l);

/* The error paths of the collect loops: every entry still pending becomes
 * not applied with why (no error: the operation fails anyway), so that no
 * pending entry reaches a written report. */
void kist_verify_abandon (struct kist_report *r, const char *why);

#endif
