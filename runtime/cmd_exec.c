/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist exec [flags] ID [COMMAND [ARG...]]: run a process in a running container. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "log.h"
#include "terminal.h"
#include "exec.h"
#include "util.h"
#include "selfexe.h"

static void
strv_push (char ***v, const char *s)
{
  size_t n = kist_strv_len (*v);
  *v = xrealloc (*v, (n + 2) * sizeof (char *));
  (*v)[n] = xstrdup (s);
  (*v)[n + 1] = NULL;
}

/* UID[:GID], numeric (names would need the container's /etc/passwd). */
static int
parse_user (const char *s, struct kist_exec_opts *o, struct kist_error **err)
{
  _cleanup_free_ char *copy = xstrdup (s);
  char *colon = strchr (copy, ':');
  uint64_t uid = 0, gid = 0;
  if (colon)
    *colon = '\0';
  if (kist_parse_u64 (copy, &uid) < 0 || uid > UINT32_MAX - 1
      || (colon && (kist_parse_u64 (colon + 1, &gid) < 0 || gid > UINT32_MAX - 1)))
    return kist_cmd_usage_error (err,
                                 "--user `%s`: expected UID[:GID] (numbers; user names are not "
                                 "looked up)",
                                 s);
  o->has_user = true;
  o->uid = (uint32_t) uid;
  o->gid = (uint32_t) gid;
  return 0;
}

int
kist_cmd_exec (const struct kist_globals *g, int argc, char **argv, struct kist_error **err)
{
  enum
  {
    O_PROCESS = 256, O_PIDFILE, O_CONSOLE, O_PRESERVE, O_CWD, O_CAP, O_NNP, O_REPORT, O_REPORTFD,
    O_DEGRADE, O_IGNORED_ARG, O_IGNORED
  };
  static const struct option opts[] = {
    { "process", required_argument, NULL, 'p' },
    { "detach", no_argument, NULL, 'd' },
    { "pid-file", required_argument, NULL, O_PIDFILE },
    { "tty", no_argument, NULL, 't' },
    { "console-socket", required_argument, NULL, O_CONSOLE },
    { "preserve-fds", required_argument, NULL, O_PRESERVE },
    { "cwd", required_argument, NULL, O_CWD },
    { "env", required_argument, NULL, 'e' },
    { "user", required_argument, NULL, 'u' },
    { "cap", required_argument, NULL, 'c' },
    { "no-new-privs", no_argument, NULL, O_NNP },
    { "report", required_argument, NULL, O_REPORT },
    { "report-fd", required_argument, NULL, O_REPORTFD },
    { "allow-degraded", required_argument, NULL, O_DEGRADE },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  struct kist_exec_opts o = { .report_fd = -1 };
  _cleanup_strv_ char **env = NULL, **caps = NULL;
  int c;
  opterr = 0;
  while ((c = getopt_long (argc, argv, "+p:dte:u:c:h", opts, NULL)) != -1)
    switch (c)
      {
      case 'h': return kist_cmd_help ("exec");
      case 'p': o.process_file = optarg; break;
      case 'd': o.detach = true; break;
      case O_PIDFILE: o.pid_file = optarg; break;
      case 't': o.tty = true; break;
      case O_CONSOLE: o.console_socket = optarg; break;
      case O_PRESERVE:
        if (kist_cmd_fd_arg (optarg, "--preserve-fds `%s`: expected a number >= 0",
                             &o.preserve_fds, err) < 0)
          return KIST_EXIT_USAGE;
        break;
      case O_CWD: o.cwd = optarg; break;
      case 'e':
        if (strchr (optarg, '=') == NULL || optarg[0] == '=')
          return kist_cmd_usage_error (err, "--env `%s`: expected KEY=VALUE", optarg),
                 KIST_EXIT_USAGE;
        strv_push (&env, optarg);
        break;
      case 'u':
        if (parse_user (optarg, &o, err) < 0)
          return KIST_EXIT_USAGE;
        break;
      case 'c': strv_push (&caps, optarg); break;
      case O_NNP: o.no_new_privs = true; break;
      case O_REPORT: o.report_path = optarg; break;
      case O_REPORTFD:
        if (kist_cmd_fd_arg (optarg, "--report-fd `%s`: expected a file descriptor number",
                             &o.report_fd, err) < 0)
          return KIST_EXIT_USAGE;
        break;
      case O_DEGRADE: o.allow_degraded = optarg; break;
      default:
        return kist_cmd_usage_error (err, "unknown option or missing value: `%s`",
                                     argv[optind - 1]),
               KIST_EXIT_USAGE;
      }
  if (optind >= argc)
    return kist_cmd_usage_error (err, "`kist exec` needs a container id%s", ""), KIST_EXIT_USAGE;
  o.id = argv[optind];
  o.args = optind + 1 < argc ? argv + optind + 1 : NULL;
  o.env = env;
  o.caps = caps;
  if (o.process_file == NULL && o.args == NULL)
    return kist_cmd_usage_error (err, "`kist exec %s`: give COMMAND [ARG...] or --process FILE",
                                 o.id),
           KIST_EXIT_USAGE;

  _cleanup_free_ char *policy = NULL;
  o.allow_degraded = kist_cmd_policy (g, o.allow_degraded, &policy);
  pid_t pid = 0;
  int pty = -1;
  o.pty_master = &pty;
  if (kist_exec (g, &o, &pid, err) < 0)
    return kist_error_exit_status (*err);
  if (o.detach)
    return 0;
  kist_forward_signals (pid);
  kist_self_protect_settle (); /* its grace period while the process runs */
  if (pty >= 0 && kist_terminal_relay (pty, pid, err) < 0)
    kist_log_warn ("%s", (*err)->msg), kist_error_freep (err);
  int status = kist_wait_status (pid, -1, err);
  return status < 0 ? KIST_EXIT_FAILURE : status;
}
