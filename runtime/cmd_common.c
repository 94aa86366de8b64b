/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: flag parsing shared by the subcommands, every command's --help, the
 * degradation policy (global and per command), and the runc commands kist
 * does not implement (checkpoint, restore). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "util.h"

int
kist_cmd_usage_error (struct kist_error **err, const char *fmt, const char *arg)
{
  kist_error_make (err, EINVAL, fmt, arg);
  (*err)->status = KIST_EXIT_USAGE;
  return -1;
}

int
kist_cmd_fd_arg (const char *arg, const char *fmt, int *out, struct kist_error **err)
{
  int n;
  if (kist_parse_int (arg, &n) < 0 || n < 0)
    return kist_cmd_usage_error (err, fmt, arg);
  *out = n;
  return 0;
}

static int
parse_create_flags (int argc, char **argv, struct kist_create_opts *o, bool run, bool *detach,
                    bool *keep, struct kist_error **err)
{
  enum
  {
    O_PIDFILE = 256, O_CONSOLE, O_PRESERVE, O_NOPIVOT, O_NOKEYRING, O_REPORT, O_REPORTFD, O_DEGRADE,
    O_KEEP, O_NOSUBREAPER
  };
  static const struct option opts[] = {
    { "bundle", required_argument, NULL, 'b' },
    { "pid-file", required_argument, NULL, O_PIDFILE },
    { "console-socket", required_argument, NULL, O_CONSOLE },
    { "preserve-fds", required_argument, NULL, O_PRESERVE },
    { "no-pivot", no_argument, NULL, O_NOPIVOT },
    { "no-new-keyring", no_argument, NULL, O_NOKEYRING },
    { "no-subreaper", no_argument, NULL, O_NOSUBREAPER },
    { "report", required_argument, NULL, O_REPORT },
    { "report-fd", required_argument, NULL, O_REPORTFD },
    { "allow-degraded", required_argument, NULL, O_DEGRADE },
    { "detach", no_argument, NULL, 'd' },
    { "keep", no_argument, NULL, O_KEEP },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  int c;
  o->report_fd = -1;
  opterr = 0;
  while ((c = getopt_long (argc, argv, run ? "+b:dh" : "+b:h", opts, NULL)) != -1)
    switch (c)
      {
      case 'h':
        /* Nothing is held yet: the help is the whole command. */
        kist_cmd_help (run ? "run" : "create");
        exit (0);
      case 'b': o->bundle = optarg; break;
      case O_PIDFILE: o->pid_file = optarg; break;
      case O_CONSOLE: o->console_socket = optarg; break;
      case O_PRESERVE:
        if (kist_cmd_fd_arg (optarg, "--preserve-fds `%s`: expected a number >= 0",
                             &o->preserve_fds, err) < 0)
          return -1;
        break;
      case O_NOPIVOT: o->no_pivot = true; break;
      case O_NOKEYRING: o->no_new_keyring = true; break;
      case O_NOSUBREAPER: break;
      case O_REPORT: o->report_path = optarg; break;
      case O_REPORTFD:
        if (kist_cmd_fd_arg (optarg, "--report-fd `%s`: expected a file descriptor number",
                             &o->report_fd, err) < 0)
          return -1;
        break;
      case O_DEGRADE: o->allow_degraded = optarg; break;
      case 'd':
        if (!run)
          return kist_cmd_usage_error (err, "unknown option `%s`", "--detach");
        *detach = true;
        break;
      case O_KEEP:
        if (!run)
          return kist_cmd_usage_error (err, "unknown option `%s`", "--keep");
        *keep = true;
        break;
      default:
        return kist_cmd_usage_error (err, "unknown option or missing value: `%s`",
                                     argv[optind - 1]);
      }
  return optind;
}

int
kist_parse_create_flags (const struct kist_globals *g, int argc, char **argv,
                         struct kist_create_opts *o, bool run, bool *detach, bool *keep,
                         char **policy, struct kist_error **err)
{
  int first = parse_create_flags (argc, argv, o, run, detach, keep, err);
  if (first < 0 || kist_cmd_one_id (run ? "run" : "create", argc, argv, first, &o->id, err) < 0)
    return -1;
  o->allow_degraded = kist_cmd_policy (g, o->allow_degraded, policy);
  return 0;
}

/* Is v one of the '|'-separated choices? */
static bool
is_choice (const char *choices, const char *v)
{
  size_t n = strlen (v);
  for (const char *s = choices; s; s = strchr (s, '|') ? strchr (s, '|') + 1 : NULL)
    if (strncmp (s, v, n) == 0 && (s[n] == '|' || s[n] == '\0'))
      return true;
  return false;
}

int
kist_cmd_options (const char *cmd, int argc, char **argv, const struct kist_cmd_opt *opts,
                  size_t n, struct kist_error **err)
{
  enum
  {
    MAX_OPTS = 8
  };
  struct option lo[MAX_OPTS + 2];
  char shorts[3 * MAX_OPTS + 4] = "+h";
  bool any_value = false;
  size_t k = strlen (shorts);
  if (n > MAX_OPTS)
    abort ();
  for (size_t i = 0; i < n; i++)
    {
      int code = opts[i].letter ? opts[i].letter : 256 + (int) i;
      lo[i] = (struct option){ opts[i].name, opts[i].value ? required_argument : no_argument, NULL,
                               code };
      any_value = any_value || opts[i].value;
      if (opts[i].letter)
        {
          shorts[k++] = opts[i].letter;
          if (opts[i].value)
            shorts[k++] = ':';
        }
    }
  shorts[k] = '\0';
  lo[n] = (struct option){ "help", no_argument, NULL, 'h' };
  lo[n + 1] = (struct option){ NULL, 0, NULL, 0 };
  int c;
  opterr = 0;
  while ((c = getopt_long (argc, argv, shorts, lo, NULL)) != -1)
    {
      if (c == 'h')
        {
          kist_cmd_help (cmd);
          return KIST_CMD_HELPED;
        }
      size_t i = 0;
      while (i < n && (opts[i].letter ? opts[i].letter : 256 + (int) i) != c)
        i++;
      if (i == n)
        {
          kist_error_make (err, EINVAL, "%s: unknown option%s `%s`", cmd,
                           any_value ? " or missing value:" : "", argv[optind - 1]);
          return -1;
        }
      if (opts[i].flag)
        *opts[i].flag = true;
      if (opts[i].value)
        {
          if (opts[i].choices && !is_choice (opts[i].choices, optarg))
            {
              _cleanup_free_ char *list = xstrdup (opts[i].choices);
              char *bar = strchr (list, '|');
              if (bar)
                *bar = '\0';
              kist_error_make (err, EINVAL, "%s: --%s `%s`: expected %s%s%s", cmd, opts[i].name,
                               optarg, list, bar ? " or " : "", bar ? bar + 1 : "");
              return -1;
            }
          *opts[i].value = optarg;
        }
    }
  return optind;
}

int
kist_cmd_id_options (const char *cmd, int argc, char **argv, const struct kist_cmd_opt *opts,
                     size_t n, const char **id, struct kist_error **err)
{
  int first = kist_cmd_options (cmd, argc, argv, opts, n, err);
  if (first < 0)
    return first;
  if (kist_cmd_one_id (cmd, argc, argv, first, id, err) < 0 || kist_id_validate (*id, err) < 0)
    return -1;
  return 0;
}

int
kist_cmd_one_id (const char *cmd, int argc, char **argv, int optind_, const char **id,
                 struct kist_error **err)
{
  if (argc - optind_ != 1)
    {
      kist_error_make (err, EINVAL, "`kist %s` takes exactly one container id (got %d arguments)", cmd,
                       argc - optind_);
      (*err)->status = KIST_EXIT_USAGE;
      return -1;
    }
  *id = argv[optind_];
  return 0;
}

int
kist_cmd_open_root (const struct kist_globals *g, struct kist_error **err)
{
  _cleanup_free_ char *resolved = NULL;
  return kist_container_root_open (g->root, &resolved, err);
}

/* ---- --help ------------------------------------------------------------ */

/* Every flag each command's getopt table accepts, and nothing else; the
 * command's man page lists the same ones (tests/integration/t_cli.sh checks
 * both).  Long options take "--opt VALUE" and "--opt=VALUE". */
#define HELP_LINE "  -h, --help                  print this help and exit\n"
#define CREATE_OPTIONS                                                                           \
  "  -b, --bundle DIR            bundle directory holding config.json (default: the current\n"  \
  "                              directory)\n"                                                  \
  "      --pid-file FILE         write the host pid of the container's init to FILE\n"          \
  "      --console-socket PATH   AF_UNIX socket that receives the terminal's pty master\n"      \
  "      --preserve-fds N        pass file descriptors 3 to 3+N-1 to the container\n"           \
  "      --no-pivot              MS_MOVE and chroot instead of pivot_root (weaker isolation)\n" \
  "      --no-new-keyring        accepted (runc); kist never creates a session keyring\n"       \
  "      --no-subreaper          accepted (runc); kist needs no subreaper\n"                    \
  "      --report FILE|-         also write the report to FILE (atomically), or to stdout\n"    \
  "      --report-fd N           also write the report to file descriptor N\n"                  \
  "      --allow-degraded LIST   layers that may fail: comma-separated layer names, P.*\n"      \
  "                              prefixes or all (added to the global --allow-degraded)\n"
#define CRIU_OPTIONS                                                                             \
  "      --image-path DIR        (runc) directory of the CRIU image files\n"                    \
  "      --work-path DIR         (runc) directory for CRIU work files and logs\n"               \
  "      --tcp-established       (runc) allow established TCP connections\n"                    \
  "      --ext-unix-sk           (runc) allow external unix sockets\n"                          \
  "      --shell-job             (runc) allow shell jobs\n"                                     \
  "      --file-locks            (runc) allow file locks\n"                                     \
  "      --manage-cgroups-mode MODE  (runc) soft, full, strict or ignore\n"                     \
  "      --empty-ns NS           (runc) a namespace whose properties are not saved\n"           \
  "      --auto-dedup            (runc) deduplicate the memory images\n"                        \
  "      --lazy-pages            (runc) lazy migration\n"
#define CRIU_NOTE                                                                                \
  "kist has no CRIU integration: the flags of runc are accepted so that an engine\n"            \
  "gets this answer, and the command then fails (see kist-checkpoint(8)).\n"

struct cmd_help
{
  const char *name;
  const char *args;    /* after "kist NAME" */
  const char *summary; /* one sentence */
  const char *options; /* the option lines, without --help; NULL: none */
  const char *note;    /* a paragraph after the options, or NULL */
};

static const struct cmd_help helps[] = {
  { "spec", "[OPTIONS]", "Write a default config.json into a bundle directory.",
    "  -b, --bundle DIR            bundle directory to write config.json in (default: .)\n"
    "      --rootless              a configuration for an unprivileged caller (user namespace)\n",
    NULL },
  { "create", "[OPTIONS] ID",
    "Set container ID up, every layer applied and verified, and leave its init waiting for "
    "`kist start ID`.",
    CREATE_OPTIONS, NULL },
  { "start", "ID", "Let the waiting init of created container ID execute its program.", NULL,
    NULL },
  { "run", "[OPTIONS] ID", "Create, start and wait for container ID, then delete it.",
    CREATE_OPTIONS
    "  -d, --detach                return once the program started (no wait, no delete)\n"
    "      --keep                  do not delete the container after its program exited\n",
    NULL },
  { "exec", "[OPTIONS] ID [COMMAND [ARG...]]",
    "Run a process in running container ID, joining its namespaces and cgroup.",
    "  -p, --process FILE          the process as an OCI process JSON object (instead of\n"
    "                              COMMAND)\n"
    "  -d, --detach                do not wait for the process\n"
    "      --pid-file FILE         write the host pid of the process to FILE\n"
    "  -t, --tty                   give the process a terminal\n"
    "      --console-socket PATH   AF_UNIX socket that receives the terminal's pty master\n"
    "      --preserve-fds N        pass file descriptors 3 to 3+N-1 to the process\n"
    "      --cwd DIR               the working directory inside the container\n"
    "  -e, --env KEY=VALUE         set an environment variable (repeatable)\n"
    "  -u, --user UID[:GID]        numeric user and group\n"
    "  -c, --cap CAP               add a capability (repeatable)\n"
    "      --no-new-privs          set no_new_privileges\n"
    "      --report FILE|-         also write the report to FILE, or to stdout\n"
    "      --report-fd N           also write the report to file descriptor N\n"
    "      --allow-degraded LIST   layers that may fail: comma-separated layer names, P.*\n"
    "                              prefixes or all (added to the global --allow-degraded)\n",
    NULL },
  { "state", "ID", "Print the OCI state of container ID as JSON.", NULL, NULL },
  { "kill", "[OPTIONS] ID [SIGNAL]",
    "Send SIGNAL (a name or number, default SIGTERM) to the init of container ID.",
    "  -a, --all                   signal every process of the container's cgroup\n", NULL },
  { "delete", "[OPTIONS] ID", "Delete container ID and verify that it is gone.",
    "  -f, --force                 kill a running container first\n", NULL },
  { "list", "[OPTIONS]", "List the containers under the state root.",
    "  -f, --format table|json     output format (default: table)\n"
    "  -q, --quiet                 print only the ids\n",
    NULL },
  { "report", "[OPTIONS] ID", "Print the stored report of container ID.",
    "  -f, --format json|text      output format (default: json)\n", NULL },
  { "features", "", "Print what this kist implements, as JSON (runc's features format).", NULL,
    NULL },
  { "pause", "ID", "Freeze every process of container ID (cgroup v2 freezer).", NULL, NULL },
  { "resume", "ID", "Thaw paused container ID.", NULL, NULL },
  { "ps", "[OPTIONS] ID [-- PS-ARGS]", "List the processes of container ID.",
    "  -f, --format table|json     a ps(1) table or a JSON array of host pids (default:\n"
    "                              table)\n"
    "  PS-ARGS                     ps(1) options for the table (default -ef): -f, u,\n"
    "                              -o KEYWORD[=HEADER],... ; -e -A -a -x are accepted\n",
    NULL },
  { "update", "[OPTIONS] ID", "Change the cgroup limits of running container ID, with read-back.",
    "  -r, --resources FILE|-      an OCI LinuxResources JSON object, from FILE or stdin\n"
    "      --memory SIZE           memory.max (e.g. 512m; -1: unlimited)\n"
    "      --memory-reservation SIZE  memory.low\n"
    "      --memory-swap SIZE      memory plus swap (memory.swap.max)\n"
    "      --cpu-shares N          cpu.weight, converted from shares\n"
    "      --cpu-share N           the same (runc's spelling)\n"
    "      --cpu-quota USECS       cpu.max quota (-1: unlimited)\n"
    "      --cpu-period USECS      cpu.max period\n"
    "      --cpuset-cpus LIST      cpuset.cpus\n"
    "      --cpuset-mems LIST      cpuset.mems\n"
    "      --pids-limit N          pids.max (-1: unlimited)\n"
    "      --blkio-weight N        io.weight (10 to 1000)\n"
    "      --allow-degraded LIST   limits that may fail (e.g. cgroup.pids.max, cgroup.*, all),\n"
    "                              added to the global --allow-degraded\n",
    NULL },
  { "events", "[OPTIONS] ID", "Print resource statistics and OOM events of container ID.",
    "      --stats                 print the statistics once and exit\n"
    "      --interval DURATION     time between statistics (default: 5s)\n",
    NULL },
  { "sandbox", "[OPTIONS] -- COMMAND [ARG...]",
    "Run COMMAND once in a fresh, disposable sandbox and remove the sandbox afterwards.",
    "      --rootfs DIR            read-only root from DIR (default: an empty directory)\n"
    "      --ro SRC[:DEST]         bind host path SRC read-only (repeatable)\n"
    "      --rw SRC[:DEST]         bind host path SRC writable (repeatable)\n"
    "      --ro-try SRC[:DEST]     as --ro, skipped when SRC does not exist\n"
    "      --rw-try SRC[:DEST]     as --rw, skipped when SRC does not exist\n"
    "      --symlink TARGET DEST   a symlink at DEST in the empty root (repeatable)\n"
    "      --dir DEST              a directory at DEST in the empty root (repeatable)\n"
    "      --tmpfs DEST[:SIZE]     a tmpfs at DEST (repeatable)\n"
    "      --workdir DIR           where the scratch directory is mounted (default: /work)\n"
    "      --scratch-size SIZE     size of the scratch tmpfs (default: 256m)\n"
    "      --scratch-inodes N      inodes of the scratch tmpfs (default: 65536)\n"
    "      --keep                  a kept host directory as the workdir instead of a tmpfs\n"
    "      --workspace DIR         an overlay on DIR as the workdir\n"
    "      --commit on-success|always|never  when to merge the --workspace changes\n"
    "      --setenv KEY=VALUE      set an environment variable (repeatable)\n"
    "      --env-file FILE         KEY=VALUE lines to set\n"
    "      --uid N                 the user inside (default: 65534)\n"
    "      --gid N                 the group inside (default: 65534)\n"
    "      --hostname NAME         default: sandbox\n"
    "      --seccomp default|strict|none|PATH  the seccomp profile (default: strict)\n"
    "      --net none|host         an empty network namespace with lo (default) or the host's\n"
    "      --userns                refused for now\n"
    "      --cwd DIR               the working directory (default: the workdir)\n"
    "      --memory SIZE           memory.max\n"
    "      --pids N                pids.max\n"
    "      --cpus F                cpu.max: F CPUs\n"
    "      --nofile N              RLIMIT_NOFILE\n"
    "      --fsize SIZE            RLIMIT_FSIZE\n"
    "      --nproc N               RLIMIT_NPROC\n"
    "      --core SIZE             RLIMIT_CORE\n"
    "      --cpu-time SECONDS      RLIMIT_CPU\n"
    "      --timeout DURATION      kill the whole sandbox after DURATION (exit 124)\n"
    "      --grace DURATION        after SIGINT, SIGTERM, SIGHUP or SIGQUIT (passed on to the\n"
    "                              command), kill the whole sandbox DURATION later (default: 3s)\n"
    "      --report FILE|-         write the report to FILE, or to stdout\n"
    "      --report-fd N           write the report to file descriptor N\n"
    "      --status-fd N           one JSON object per line on fd N: when the command started\n"
    "                              (pids, namespaces) and when it ended (how, status, usage)\n"
    "      --report-format json|text  format of --report and --report-fd (default: json)\n"
    "      --allow-degraded LIST   layers that may fail: comma-separated layer names, P.*\n"
    "                              prefixes or all (added to the global --allow-degraded)\n"
    "      --fallback landlock|none  where no user namespace can be made: run without\n"
    "                              namespaces, confined by Landlock (weaker; default: none)\n",
    NULL },
  { "gc", "[OPTIONS]", "Remove sandboxes whose deadline passed or whose kist process died.",
    "  -n, --dry-run               only print what would be removed\n"
    "  -f, --format text|json      output format (default: text)\n",
    NULL },
  { "checkpoint", "[OPTIONS] ID", "Not supported: runc's checkpoint of a running container.",
    CRIU_OPTIONS
    "      --parent-path DIR       (runc) previous CRIU images, for a pre-dump\n"
    "      --leave-running         (runc) leave the container running\n"
    "      --status-fd FD          (runc) fd that CRIU's lazy-pages server reports on\n"
    "      --page-server IP:PORT   (runc) start a CRIU page server\n"
    "      --pre-dump              (runc) dump only the memory, leave the container running\n",
    CRIU_NOTE },
  { "restore", "[OPTIONS] ID", "Not supported: runc's restore of a checkpointed container.",
    CRIU_OPTIONS
    "  -b, --bundle DIR            (runc) the bundle directory\n"
    "  -d, --detach                (runc) detach from the container's process\n"
    "      --console-socket PATH   (runc) AF_UNIX socket for the terminal's pty master\n"
    "      --pid-file FILE         (runc) write the init's pid to FILE\n"
    "      --no-subreaper          (runc) no subreaper\n"
    "      --no-pivot              (runc) no pivot_root\n"
    "      --lsm-profile TYPE:LABEL  (runc) LSM profile for the restore\n"
    "      --lsm-mount-context CONTEXT  (runc) LSM mount context for the restore\n",
    CRIU_NOTE },
};

bool
kist_cmd_is_help (const char *arg)
{
  return arg != NULL && (strcmp (arg, "--help") == 0 || strcmp (arg, "-h") == 0);
}

int
kist_cmd_help (const char *cmd)
{
  for (size_t i = 0; i < KIST_ARRAY_SIZE (helps); i++)
    {
      const struct cmd_help *h = &helps[i];
      if (strcmp (h->name, cmd) != 0)
        continue;
      printf ("Usage: kist [GLOBAL OPTIONS] %s%s%s\n\n%s\n\nOptions:\n%s" HELP_LINE, h->name,
              h->args[0] ? " " : "", h->args, h->summary, h->options ? h->options : "");
      if (h->note)
        printf ("\n%s", h->note);
      printf ("\nGlobal options (before %s): see kist --help.  See kist-%s(8).\n", h->name,
              h->name);
      return 0;
    }
  /* A command without an entry here is a bug: say so rather than nothing. */
  printf ("Usage: kist [GLOBAL OPTIONS] %s ...\n\nSee kist-%s(8).\n", cmd, cmd);
  return 0;
}

/* ---- the degradation policy -------------------------------------------- */

const char *
kist_cmd_policy (const struct kist_globals *g, const char *local, char **storage)
{
  const char *global = g ? g->allow_degraded : NULL;
  if (global == NULL || global[0] == '\0')
    return local;
  if (local == NULL || local[0] == '\0')
    return global;
  /* kist_report_may_degrade matches each comma-separated token on its own,
   * so the union is the concatenation. */
  *storage = xasprintf ("%s,%s", global, local);
  return *storage;
}

/* ---- checkpoint, restore (runc commands kist does not implement) -------- */

static int
criu_command (const char *cmd, int argc, char **argv, const char *shorts,
              const struct option *opts, int status, struct kist_error **err)
{
  int c;
  opterr = 0;
  while ((c = getopt_long (argc, argv, shorts, opts, NULL)) != -1)
    {
      if (c == 'h')
        return kist_cmd_help (cmd);
      if (c == '?' || c == ':')
        {
          kist_error_make (err, EINVAL, "%s: unknown option or missing value: `%s` (see kist %s "
                           "--help)", cmd, argv[optind - 1], cmd);
          (*err)->status = KIST_EXIT_USAGE;
          return KIST_EXIT_USAGE;
        }
    }
  kist_error_make (err, 0,
                   "%s is not supported by kist: kist has no CRIU integration, so it can neither "
                   "checkpoint a container nor restore one; stop the container and create it "
                   "again, or use a runtime with CRIU support (runc, crun) for checkpoint/restore",
                   cmd);
  (*err)->status = status;
  return status;
}

int
kist_cmd_checkpoint (const struct kist_globals *g, int argc, char **argv, struct kist_error **err)
{
  static const struct option opts[] = {
    { "image-path", required_argument, NULL, 1 },  { "work-path", required_argument, NULL, 1 },
    { "parent-path", required_argument, NULL, 1 }, { "leave-running", no_argument, NULL, 1 },
    { "tcp-established", no_argument, NULL, 1 },   { "ext-unix-sk", no_argument, NULL, 1 },
    { "shell-job", no_argument, NULL, 1 },         { "lazy-pages", no_argument, NULL, 1 },
    { "status-fd", required_argument, NULL, 1 },   { "page-server", required_argument, NULL, 1 },
    { "file-locks", no_argument, NULL, 1 },        { "pre-dump", no_argument, NULL, 1 },
    { "manage-cgroups-mode", required_argument, NULL, 1 },
    { "empty-ns", required_argument, NULL, 1 },    { "auto-dedup", no_argument, NULL, 1 },
    { "help", no_argument, NULL, 'h' },            { NULL, 0, NULL, 0 },
  };
  (void) g;
  /* Exit 1, like the other commands on an existing container (kill, pause,
   * update): the container is untouched, nothing was attempted. */
  return criu_command ("checkpoint", argc, argv, "+h", opts, KIST_EXIT_USAGE, err);
}

int
kist_cmd_restore (const struct kist_globals *g, int argc, char **argv, struct kist_error **err)
{
  static const struct option opts[] = {
    { "console-socket", required_argument, NULL, 1 },
    { "image-path", required_argument, NULL, 1 },
    { "work-path", required_argument, NULL, 1 },
    { "tcp-established", no_argument, NULL, 1 },
    { "ext-unix-sk", no_argument, NULL, 1 },
    { "shell-job", no_argument, NULL, 1 },
    { "file-locks", no_argument, NULL, 1 },
    { "manage-cgroups-mode", required_argument, NULL, 1 },
    { "bundle", required_argument, NULL, 'b' },
    { "detach", no_argument, NULL, 'd' },
    { "pid-file", required_argument, NULL, 1 },
    { "no-subreaper", no_argument, NULL, 1 },
    { "no-pivot", no_argument, NULL, 1 },
    { "empty-ns", required_argument, NULL, 1 },
    { "auto-dedup", no_argument, NULL, 1 },
    { "lazy-pages", no_argument, NULL, 1 },
    { "lsm-profile", required_argument, NULL, 1 },
    { "lsm-mount-context", required_argument, NULL, 1 },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  (void) g;
  /* Exit 125, like create and run: restore would start a container, and kist
   * failed before any container ran. */
  return criu_command ("restore", argc, argv, "+b:dh", opts, KIST_EXIT_FAILURE, err);
}
