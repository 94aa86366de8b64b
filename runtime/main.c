/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: argument parsing (runc-compatible global flags) and dispatch. */
#define _GNU_SOURCE
#include <getopt.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "log.h"
#include "selfexe.h"
#include "util.h"

static const struct
{
  const char *name;
  kist_cmd_fn fn;
  const char *help;
  /* its processes enter a container: run from a protected binary (sandbox
   * protects itself once it knows who runs inside: kist_self_protect_for) */
  bool enters;
} commands[] = {
  { "spec", kist_cmd_spec, "write a default config.json" },
  { "create", kist_cmd_create, "create a container and leave it waiting for start", true },
  { "start", kist_cmd_start, "start a created container" },
  { "run", kist_cmd_run, "create, start and wait for a container", true },
  { "exec", kist_cmd_exec, "run a process in a running container", true },
  { "state", kist_cmd_state, "print the OCI state of a container" },
  { "kill", kist_cmd_kill, "send a signal to a container" },
  { "delete", kist_cmd_delete, "delete a container" },
  { "list", kist_cmd_list, "list containers" },
  { "report", kist_cmd_report, "print the report of what was applied" },
  { "features", kist_cmd_features, "print what this kist implements (JSON)" },
  { "pause", kist_cmd_pause, "freeze every process of a container" },
  { "resume", kist_cmd_resume, "thaw a paused container" },
  { "ps", kist_cmd_ps, "list the processes of a container" },
  { "update", kist_cmd_update, "change the resource limits of a container" },
  { "events", kist_cmd_events, "print resource statistics and OOM events" },
  { "sandbox", kist_cmd_sandbox, "run a command in a fresh disposable sandbox" },
  { "gc", kist_cmd_gc, "remove sandboxes whose deadline passed or whose kist died" },
  { "checkpoint", kist_cmd_checkpoint, "not supported (no CRIU): answers --help, then fails" },
  { "restore", kist_cmd_restore, "not supported (no CRIU): answers --help, then fails" },
};

static void
usage (FILE *f)
{
  fprintf (f, "Usage: kist [GLOBAL OPTIONS] COMMAND [OPTIONS] [ARGS]\n\n"
              "kist is a minimal OCI container runtime that reports what it actually applied.\n\n"
              "Global options:\n"
              "  --root DIR           state directory (default /run/kist, or $XDG_RUNTIME_DIR/kist, else /tmp/kist-UID)\n"
              "  --log FILE           also write errors to FILE\n"
              "  --log-format FORMAT  text or json\n"
              "  --debug              verbose logging; one line per report entry as it is recorded\n"
              "  --systemd-cgroup     (not implemented; refused)\n"
              "  --allow-degraded LIST  layers that may fail in create, run, exec, sandbox and\n"
              "                       update, added to each command's own --allow-degraded\n"
              "  -v, --version        print the version\n"
              "  -h, --help           print this help\n\nCommands:\n");
  for (size_t i = 0; i < KIST_ARRAY_SIZE (commands); i++)
    fprintf (f, "  %-10s %s\n", commands[i].name, commands[i].help);
  fprintf (f, "\nkist COMMAND --help lists the options of COMMAND.  See kist(8) and "
              "kist-COMMAND(8).\n");
}

int
main (int argc, char **argv)
{
  static const struct option opts[] = {
    { "root", required_argument, NULL, 'r' },
    { "log", required_argument, NULL, 'l' },
    { "log-format", required_argument, NULL, 'f' },
    { "debug", no_argument, NULL, 'd' },
    { "systemd-cgroup", no_argument, NULL, 's' },
    { "allow-degraded", required_argument, NULL, 'a' },
    { "version", no_argument, NULL, 'v' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  kist_started_init ();
  struct kist_globals g = { .argv = argv };
  const char *log_format = "text";
  int c;

  {
    _cleanup_error_ struct kist_error *serr = NULL;
    if (kist_self_refuse_setuid (&serr) < 0)
      {
        fprintf (stderr, "kist: %s\n", serr->msg);
        return KIST_EXIT_FAILURE;
      }
  }
  opterr = 0;
  while ((c = getopt_long (argc, argv, "+vh", opts, NULL)) != -1)
    switch (c)
      {
      case 'r': g.root = optarg; break;
      case 'l': g.log = optarg; break;
      case 'f': log_format = optarg; break;
      case 'd': g.debug = true; break;
      case 's': g.systemd_cgroup = true; break;
      case 'a': g.allow_degraded = optarg; break;
      case 'v':
        {
          /* runc's shape; libseccomp is the library loaded now, not the
           * headers kist was built with. */
          const struct scmp_version *sv = seccomp_version ();
          printf ("kist version %s\nspec: 1.2.0\n", KIST_VERSION);
          if (sv)
            printf ("libseccomp: %u.%u.%u\n", sv->major, sv->minor, sv->micro);
          return 0;
        }
      case 'h': usage (stdout); return 0;
      default:
        kist_log_init (NULL, false, false);
        kist_log_error ("unknown global option or missing value: `%s` (see kist --help)",
                        argv[optind - 1]);
        return KIST_EXIT_USAGE;
      }
  if (strcmp (log_format, "text") != 0 && strcmp (log_format, "json") != 0)
    {
      kist_log_init (g.log, false, false);
      kist_log_error ("--log-format `%s`: expected text or json", log_format);
      return KIST_EXIT_USAGE;
    }
  g.log_json = strcmp (log_format, "json") == 0;
  kist_log_init (g.log, g.log_json, g.debug);

  if (optind >= argc)
    {
      usage (stderr);
      return KIST_EXIT_USAGE;
    }
  const char *name = argv[optind];
  for (size_t i = 0; i < KIST_ARRAY_SIZE (commands); i++)
    if (strcmp (commands[i].name, name) == 0)
      {
        _cleanup_error_ struct kist_error *err = NULL;
        /* `kist COMMAND --help`: also for the commands whose own flag
         * parsing does not know --help, and before anything is set up. */
        if (optind + 1 < argc && kist_cmd_is_help (argv[optind + 1]))
          return kist_cmd_help (name);
        if (commands[i].enters && kist_self_protect (argv, &err) < 0)
          {
            kist_log_error ("%s", err->msg);
            return KIST_EXIT_FAILURE;
          }
        int sub_argc = argc - optind;
        char **sub_argv = argv + optind;
        optind = 0; /* reset getopt for the subcommand (0: full reinitialisation) */
        int status = commands[i].fn (&g, sub_argc, sub_argv, &err);
        if (err)
          {
            kist_log_error ("%s", err->msg);
            return status ? status : kist_error_exit_status (err);
          }
        return status;
      }
  kist_log_error ("unknown command `%s`: the commands are listed below", name);
  usage (stderr);
  return KIST_EXIT_USAGE;
}
