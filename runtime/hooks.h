/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: OCI hooks (runtime-spec 1.2 config.md "POSIX-platform Hooks",
 * runtime.md "Lifecycle").  Who runs which kind, and when:
 *
 *   prestart, createRuntime   the kist parent of create (runtime namespaces),
 *                             when the init has made its mounts and /dev and
 *                             waits before pivot_root (the init asks with GO)
 *   createContainer           the init (container namespaces), right after,
 *                             still before pivot_root
 *   startContainer            the init, after `start` arrived, right before
 *                             the end of its setup (kist_process_exec)
 *   poststart                 the kist of start, after the init's execve
 *   poststop                  the kist of delete, after the container is gone
 *
 * Each hook is fork+exec'd (no shell) with exactly its args and env, the OCI
 * state JSON on its stdin (a pipe), its stdout and stderr on kist's stderr,
 * no other fd, and its timeout enforced with a pidfd poll and SIGKILL.  Each
 * kind is one report entry, hooks.<kind>, saying which hooks ran, their exit
 * status and duration. */
#ifndef KIST_HOOKS_H
#define KIST_HOOKS_H

#include <stdbool.h>

#include "container.h"

enum kist_hook_kind
{
  KIST_HOOK_PRESTART,
  KIST_HOOK_CREATE_RUNTIME,
  KIST_HOOK_CREATE_CONTAINER,
  KIST_HOOK_START_CONTAINER,
  KIST_HOOK_POSTSTART,
  KIST_HOOK_POSTSTOP,
  KIST_HOOK_KINDS
};

/* "prestart", "createRuntime", ... as in config.json (NULL if out of range). */
const char *kist_hook_kind_name (enum kist_hook_kind k);

/* Run the hooks of one kind in order, state_json on each one's stdin, and
 * record hooks.<kind>.  prestart .. startContainer fail closed: the first
 * failure (exit status not 0, a signal, the timeout, no exec) stops them and
 * is returned (unless the policy lets hooks.<kind> degrade).  poststart and
 * poststop only warn: every hook runs, a failure is logged and recorded as
 * not applied, and 0 is returned. */
int kist_hooks_run (const struct kist_hooks *h, enum kist_hook_kind kind, const char *state_json,
                    struct kist_report *r, struct kist_error **err);

/* init_layers (child, after dev, before pivot_root): asks the parent to run
 * prestart and createRuntime (GO, answered with GO), then runs createContainer. */
int kist_hooks_create_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* Parent (collect_init, on the init's GO): prestart and createRuntime, then GO. */
int kist_hooks_parent_create (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* Init, after `start` arrived, before kist_process_exec: startContainer. */
int kist_hooks_start_container (struct kist_ctx *ctx, struct kist_report *r,
                                struct kist_error **err);
/* Parent of create, before the commit: poststart and poststop go to the state
 * dir (hooks.json), so that start and delete run what create was given. */
int kist_hooks_store (const struct kist_ctx *ctx, struct kist_error **err);
/* The stored poststart and poststop hooks (NULL: none, or unreadable: logged). */
struct kist_hooks *kist_hooks_load (int state_dirfd, const char *id);
/* start, once the exec was seen: poststart (warnings only), recorded in r. */
void kist_hooks_poststart (const struct kist_hooks *h, const struct kist_state *st,
                           struct kist_report *r);
/* delete, once the container is gone: poststop (warnings only, logged). */
void kist_hooks_poststop (const struct kist_hooks *h, const struct kist_state *st);
/* create's failure path: when one of its hooks failed, the lifecycle goes on
 * at "destroy" and then poststop (runtime.md steps 3-5, 12, 13). */
void kist_hooks_create_failed (const struct kist_ctx *ctx, struct kist_report *r);
/* Did a hook of this kind fail (the latest hooks.<kind> entry says not applied)? */
bool kist_hooks_failed (const struct kist_report *r, enum kist_hook_kind k);

#endif
