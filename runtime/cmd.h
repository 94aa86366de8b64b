/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: subcommands.  Each parses its own flags, calls the library and
 * prints; it returns the process exit status and fills *err on failure. */
#ifndef KIST_CMD_H
#define KIST_CMD_H

#include "container.h"

typedef int (*kist_cmd_fn) (const struct kist_globals *g, int argc, char **argv,
                            struct kist_error **err);

int kist_cmd_spec (const struct kist_globals *g, int argc, char **argv, struct kist_error **err);
int kist_cmd_create (const struct kist_globals *g, int argc, char **argv, struct kist_error **err);
int kist_cmd_start (const struct kist_globals *g, int argc, char **argv, struct kist_error **err);
int kist_cmd_run (const struct kist_globals *g, int argc, char **argv, struct kist_error **err);
int kist_cmd_state (const struct kist_globals *g, int argc, char **argv, struct kist_error **err);
int kist_cmd_kill (const struct kist_globals *g, int argc, char **argv, struct kist_error **err);
int kist_cmd_delete (const struct kist_globals *g, int argc, char **argv, struct kist_error **err);
int kist_cmd_list (const struct kist_globals *g, int argc, char **argv, struct kist_error **err);
int kist_cmd_pause (const struct kist_globals *g, int argc, char **argv, struct kist_error **err);
int kist_cmd_resume (const struct kist_globals *g, int argc, char **argv, struct kist_error **err);
int kist_cmd_ps (const struct kist_globals *g, int argc, char **argv, struct kist_error **err);
int kist_cmd_update (const struct kist_globals *g, int argc, char **argv, struct kist_error **err);
int kist_cmd_events (const struct kist_globals *g, int argc, char **argv, struct kist_error **err);
int kist_cmd_exec (const struct kist_globals *g, int argc, char **argv, struct kist_error **err);
int kist_cmd_sandbox (const struct kist_globals *g, int argc, char **argv, struct kist_error **err);
int kist_cmd_gc (const struct kist_globals *g, int argc, char **argv, struct kist_error **err);
int kist_cmd_features (const struct kist_globals *g, int argc, char **argv, struct kist_error **err);
int kist_cmd_report (const struct kist_globals *g, int argc, char **argv, struct kist_error **err);
/* runc's checkpoint and restore: they answer --help (podman probes
 * `checkpoint --help`) and accept runc's flags, then fail: kist has no CRIU. */
int kist_cmd_checkpoint (const struct kist_globals *g, int argc, char **argv,
                         struct kist_error **err);
int kist_cmd_restore (const struct kist_globals *g, int argc, char **argv, struct kist_error **err);

/* A usage error (EINVAL, exit status KIST_EXIT_USAGE): fmt with its one
 * %s arg.  Returns -1. */
int kist_cmd_usage_error (struct kist_error **err, const char *fmt, const char *arg);

/* A number >= 0 (an fd, a count of fds) from arg into *out; else the usage
 * error fmt (with arg). */
int kist_cmd_fd_arg (const char *arg, const char *fmt, int *out, struct kist_error **err);

/* Shared by create and run: the create flags into o, the one ID (o->id) and
 * the degradation policy (kist_cmd_policy, kept in *policy).  0, or -1 with
 * *err (a usage error). */
int kist_parse_create_flags (const struct kist_globals *g, int argc, char **argv,
                             struct kist_create_opts *o, bool run, bool *detach, bool *keep,
                             char **policy, struct kist_error **err);

/* One option of a command's table for kist_cmd_options: --name, and -letter
 * when letter is not 0.  A flag sets *flag; an option with a value stores
 * it in *value, checked against choices ("table|json") when given. */
struct kist_cmd_opt
{
  const char *name;
  char letter;
  bool *flag;
  const char **value;
  const char *choices;
};
#define KIST_CMD_HELPED (-2)
/* The options of command cmd: opts (n of them) and --help/-h.  Returns the
 * index of the first operand; KIST_CMD_HELPED once --help is printed (the
 * command exits 0); -1 with *err on an unknown option, a missing value or a
 * value not among the choices. */
int kist_cmd_options (const char *cmd, int argc, char **argv, const struct kist_cmd_opt *opts,
                      size_t n, struct kist_error **err);
/* kist_cmd_options, then exactly one operand (the id, checked with
 * kist_id_validate): 0, KIST_CMD_HELPED or -1 with *err. */
int kist_cmd_id_options (const char *cmd, int argc, char **argv, const struct kist_cmd_opt *opts,
                         size_t n, const char **id, struct kist_error **err);

/* Exactly one positional argument (the id) after optind; usage error otherwise. */
int kist_cmd_one_id (const char *cmd, int argc, char **argv, int optind_, const char **id,
                     struct kist_error **err);
/* Open the state root for a command that works on existing containers. */
int kist_cmd_open_root (const struct kist_globals *g, struct kist_error **err);

/* --help and -h: the usage of command cmd, listing every flag it accepts,
 * on stdout.  Returns 0 (the exit status). */
int kist_cmd_help (const char *cmd);
/* Is arg --help or -h? */
bool kist_cmd_is_help (const char *arg);

/* The degradation policy of create, run, exec, sandbox and update: the
 * union of the global --allow-degraded (g->allow_degraded) and the
 * command's own (local), both comma-separated lists as kist-create(8)
 * describes.  Returns NULL when neither is given, else a string that stays
 * valid while *storage does (free *storage; it may stay NULL). */
const char *kist_cmd_policy (const struct kist_globals *g, const char *local, char **storage);

#define KIST_EXIT_USAGE 1

#endif
