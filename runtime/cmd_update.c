/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist update [--resources FILE|-] [--memory N] ... ID: change the cgroup
 * limits of a live container.
 *
 * --resources reads an OCI LinuxResources object (a file, or stdin for "-"),
 * as engines send it, parsed as config.json's linux.resources is
 * (spec_resources.c); the flags fill the same struct kist_resources (runc's
 * flags; a flag given as 0 means unset, like Docker's zero-valued fields).
 * It goes to kist_container_update (lifecycle_cgroup.c), which plans,
 * writes and reads back each file; the entries it applied replace the
 * same-named entries of the stored report.json, so that `kist report`
 * shows the limits now in force.  Prints nothing on success.
 * memory.checkBeforeUpdate comes from --resources (the flags cannot ask
 * for it, as runc's), else from the stored report (config.json's value, or
 * the last update's): when true, a limit at or below the usage is refused
 * before anything is written (cgroup_ops.c), exit 1.
 *
 * The degradation policy is create's (the global --allow-degraded plus the
 * command's own): a limit that cannot be applied (e.g. its controller is
 * missing) fails the update unless its cgroup.FILE layer may degrade; a
 * degraded one is warned about and stored in report.json as not applied
 * (with the update's policy), so that `kist report` says what is missing. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "report.h"
#include "resources.h"
#include "util.h"

#define RESOURCES_MAX (1u << 20)
#define REPORT_MAX (16u << 20)

/* The flags, as given (NULL: not given). */
struct update_flags
{
  const char *memory, *memory_reservation, *memory_swap;
  const char *cpu_shares, *cpu_quota, *cpu_period, *cpuset_cpus, *cpuset_mems;
  const char *pids_limit, *blkio_weight;
};

/* A size like runc's (docker/go-units RAMInBytes): a decimal number with an
 * optional fraction and an optional binary unit k, m, g, t, p (any case,
 * optionally followed by "i" and/or "b"), or -1 for unlimited. */
static int
parse_size (const char *flag, const char *s, int64_t *out, struct kist_error **err)
{
  if (strcmp (s, "-1") == 0)
    {
      *out = -1;
      return 0;
    }
  uint64_t v;
  int r = kist_parse_size (s, true, &v);
  if (r == -EINVAL)
    return kist_error_make (err, EINVAL,
                            "update: %s `%s`: expected a size in bytes with an optional unit "
                            "(k, m, g, t, p; e.g. 512m) or -1",
                            flag, s);
  if (r < 0 || v > INT64_MAX)
    return kist_error_make (err, ERANGE, "update: %s `%s`: too large (at most %" PRId64 " bytes)",
                            flag, s, INT64_MAX);
  *out = (int64_t) v;
  return 0;
}

/* A whole decimal integer; min is the smallest accepted value. */
static int
parse_i64 (const char *flag, const char *s, int64_t min, int64_t *out, struct kist_error **err)
{
  char *end = NULL;
  errno = 0;
  long long v = strtoll (s, &end, 10);
  if (*s == '\0' || *end != '\0' || errno != 0 || v < min)
    return kist_error_make (err, EINVAL, "update: %s `%s`: expected an integer >= %" PRId64, flag,
                            s, min);
  *out = v;
  return 0;
}

/* The flags -> the struct (a flag given as 0 is unset, like Docker's
 * zero-valued fields). */
static int
flags_to_resources (const struct update_flags *f, struct kist_resources *res,
                    struct kist_error **err)
{
  int64_t shares = 0, period = 0, weight = 0, swap = 0;
  if ((f->memory && parse_size ("--memory", f->memory, &res->memory.limit, err) < 0)
      || (f->memory_reservation
          && parse_size ("--memory-reservation", f->memory_reservation, &res->memory.reservation,
                         err)
                 < 0)
      || (f->memory_swap && parse_size ("--memory-swap", f->memory_swap, &swap, err) < 0)
      || (f->cpu_shares && parse_i64 ("--cpu-shares", f->cpu_shares, 0, &shares, err) < 0)
      || (f->cpu_quota && parse_i64 ("--cpu-quota", f->cpu_quota, -1, &res->cpu.quota, err) < 0)
      || (f->cpu_period && parse_i64 ("--cpu-period", f->cpu_period, 0, &period, err) < 0)
      || (f->pids_limit && parse_i64 ("--pids-limit", f->pids_limit, -1, &res->pids_limit, err) < 0)
      || (f->blkio_weight && parse_i64 ("--blkio-weight", f->blkio_weight, 0, &weight, err) < 0))
    return -1;
  if (weight != 0 && (weight < 10 || weight > 1000))
    return kist_error_make (err, EINVAL,
                            "update: --blkio-weight `%s`: expected 10 to 1000 (0: unchanged)",
                            f->blkio_weight);
  res->memory.has_swap = swap != 0;
  res->memory.swap = swap;
  res->cpu.shares = (uint64_t) shares;
  res->cpu.period = (uint64_t) period;
  res->blockio.weight = (uint64_t) weight;
  res->cpu.cpus = f->cpuset_cpus && *f->cpuset_cpus ? xstrdup (f->cpuset_cpus) : NULL;
  res->cpu.mems = f->cpuset_mems && *f->cpuset_mems ? xstrdup (f->cpuset_mems) : NULL;
  return 0;
}

/* --resources FILE|- -> the struct. */
static int
read_resources (const char *path, struct kist_resources **out, struct kist_error **err)
{
  _cleanup_free_ char *text = NULL;
  size_t len = 0;
  bool in = strcmp (path, "-") == 0;
  if (in && kist_read_fd (STDIN_FILENO, RESOURCES_MAX, &text, &len, err) < 0)
    return kist_error_wrap (err, "update: --resources -: read the resources from stdin");
  if (!in && kist_read_file_at (AT_FDCWD, path, RESOURCES_MAX, &text, &len, err) < 0)
    return kist_error_wrap (err, "update: --resources");
  _cleanup_free_ char *doc = in ? xstrdup ("update: --resources - (stdin): ")
                                : xasprintf ("update: --resources `%s`: ", path);
  return kist_resources_parse_json (text, strlen (text), doc, "linux.resources", out, err);
}

/* memory.checkBeforeUpdate when the request does not say: the value the
 * container's stored report records (entry cgroup.memory.checkBeforeUpdate:
 * config.json's, or that of the last update that gave one), as runc keeps
 * config.json's in its state.  Read without the state lock (report.json is
 * replaced atomically; kist_container_update then opens, locks and checks
 * the state); no report or no entry: no check. */
static void
stored_check (int rootfd, const char *id, struct kist_resources *res)
{
  if (res->memory.has_check_before_update)
    return;
  _cleanup_close_ int dfd = openat (rootfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  _cleanup_free_ char *json = NULL;
  size_t len = 0;
  struct kist_error *e = NULL;
  if (dfd < 0 || kist_read_file_at (dfd, "report.json", REPORT_MAX, &json, &len, &e) < 0)
    {
      kist_error_free (e);
      return;
    }
  _cleanup_report_ struct kist_report *rep = kist_report_from_json (json, len, &e);
  kist_error_free (e);
  const struct kist_layer *l = rep ? kist_report_find (rep, "cgroup.memory.checkBeforeUpdate") : NULL;
  res->memory.check_before_update
      = l && l->applied && l->requested && strcmp (l->requested, "true") == 0;
}

int
kist_cmd_update (const struct kist_globals *g, int argc, char **argv, struct kist_error **err)
{
  enum
  {
    O_MEM = 256, O_MEMRES, O_SWAP, O_SHARES, O_QUOTA, O_PERIOD, O_CPUS, O_MEMS, O_PIDS, O_WEIGHT,
    O_DEGRADE
  };
  static const struct option opts[] = {
    { "resources", required_argument, NULL, 'r' },
    { "memory", required_argument, NULL, O_MEM },
    { "memory-reservation", required_argument, NULL, O_MEMRES },
    { "memory-swap", required_argument, NULL, O_SWAP },
    { "cpu-shares", required_argument, NULL, O_SHARES },
    { "cpu-share", required_argument, NULL, O_SHARES }, /* runc's spelling */
    { "cpu-quota", required_argument, NULL, O_QUOTA },
    { "cpu-period", required_argument, NULL, O_PERIOD },
    { "cpuset-cpus", required_argument, NULL, O_CPUS },
    { "cpuset-mems", required_argument, NULL, O_MEMS },
    { "pids-limit", required_argument, NULL, O_PIDS },
    { "blkio-weight", required_argument, NULL, O_WEIGHT },
    { "allow-degraded", required_argument, NULL, O_DEGRADE },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  struct update_flags f = { 0 };
  const char *resources = NULL, *allow_degraded = NULL;
  int c;
  opterr = 0;
  while ((c = getopt_long (argc, argv, "+r:h", opts, NULL)) != -1)
    {
      switch (c)
        {
        case 'h': return kist_cmd_help ("update");
        case 'r': resources = optarg; break;
        case O_DEGRADE: allow_degraded = optarg; break;
        case O_MEM: f.memory = optarg; break;
        case O_MEMRES: f.memory_reservation = optarg; break;
        case O_SWAP: f.memory_swap = optarg; break;
        case O_SHARES: f.cpu_shares = optarg; break;
        case O_QUOTA: f.cpu_quota = optarg; break;
        case O_PERIOD: f.cpu_period = optarg; break;
        case O_CPUS: f.cpuset_cpus = optarg; break;
        case O_MEMS: f.cpuset_mems = optarg; break;
        case O_PIDS: f.pids_limit = optarg; break;
        case O_WEIGHT: f.blkio_weight = optarg; break;
        default:
          kist_error_make (err, EINVAL, "update: unknown option or missing value: `%s`",
                           argv[optind - 1]);
          return KIST_EXIT_USAGE;
        }
    }
  bool any_flag = f.memory || f.memory_reservation || f.memory_swap || f.cpu_shares || f.cpu_quota
             || f.cpu_period || f.cpuset_cpus || f.cpuset_mems || f.pids_limit || f.blkio_weight;
  const char *id = NULL;
  if (kist_cmd_one_id ("update", argc, argv, optind, &id, err) < 0 || kist_id_validate (id, err) < 0)
    return KIST_EXIT_USAGE;
  if (resources && any_flag)
    {
      kist_error_make (err, EINVAL,
                       "update: give either --resources or the limit flags (--memory, "
                       "--cpu-quota, ...), not both");
      return KIST_EXIT_USAGE;
    }
  if (!resources && !any_flag)
    {
      kist_error_make (err, EINVAL,
                       "update: nothing to update: give --resources FILE|- or a limit flag "
                       "(--memory, --memory-reservation, --memory-swap, --cpu-shares, "
                       "--cpu-quota, --cpu-period, --cpuset-cpus, --cpuset-mems, --pids-limit, "
                       "--blkio-weight)");
      return KIST_EXIT_USAGE;
    }

  /* The request first: a malformed one fails before the container is touched. */
  _cleanup_resources_ struct kist_resources *res = NULL;
  if (resources ? read_resources (resources, &res, err) < 0
                : flags_to_resources (&f, res = xcalloc (1, sizeof *res), err) < 0)
    return KIST_EXIT_USAGE;

  _cleanup_close_ int rootfd = kist_cmd_open_root (g, err);
  if (rootfd < 0)
    return KIST_EXIT_USAGE;
  stored_check (rootfd, id, res);
  _cleanup_free_ char *policy = NULL;
  if (kist_container_update (rootfd, id, res, kist_cmd_policy (g, allow_degraded, &policy), err)
      < 0)
    return KIST_EXIT_USAGE;
  return 0;
}
