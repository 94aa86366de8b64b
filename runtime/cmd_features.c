/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist features: what this kist implements, in runc's features.json shape
 * (runtime-spec features.md), so that engines can probe it. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caps.h"
#include "cmd.h"
#include "json.h"
#include "layer.h"
#include "seccomp.h"
#include "util.h"

static void
str_array (yajl_gen g, const char *key, const char *const *v)
{
  kist_json_gen_str_lossy (g, key);
  yajl_gen_array_open (g);
  for (; *v; v++)
    kist_json_gen_str_lossy (g, *v);
  yajl_gen_array_close (g);
}

static void
add_name (const char *name, enum kist_group group, void *arg)
{
  (void) group;
  char **names = arg;
  char *n = *names ? xasprintf ("%s,%s", *names, name) : xstrdup (name);
  free (*names);
  *names = n;
}

int
kist_cmd_features (const struct kist_globals *g, int argc, char **argv, struct kist_error **err)
{
  static const char *const hooks[] = { "prestart", "createRuntime", "createContainer",
                                       "startContainer", "poststart", "poststop", NULL };
  static const char *const mount_options[] = {
    "ro", "rw", "suid", "nosuid", "dev", "nodev", "exec", "noexec", "async", "atime", "noatime",
    "relatime", "norelatime", "strictatime", "nostrictatime", "diratime", "nodiratime",
    "nosymfollow", "symfollow", "rro", "rrw", "rnosuid", "rsuid", "rnodev", "rdev", "rnoexec",
    "rexec", "ratime", "rnoatime", "rrelatime", "rnorelatime", "rstrictatime", "rnostrictatime",
    "rdiratime", "rnodiratime", "rnosymfollow", "rsymfollow", "bind", "rbind", "private",
    "rprivate", "shared", "rshared", "slave", "rslave", "unbindable", "runbindable", "idmap", "ridmap", NULL
  };
  static const char *const namespaces[] = { "user", "mount", "pid", "network", "uts",
                                            "ipc", "cgroup", "time", NULL };
  if (argc > 1)
    {
      kist_error_make (err, EINVAL, "features: takes no arguments");
      return KIST_EXIT_USAGE;
    }
  _cleanup_yajl_gen_ yajl_gen gen = kist_json_gen_new (true, false);
  yajl_gen_map_open (gen);
  kist_json_gen_str_lossy (gen, "ociVersionMin");
  kist_json_gen_str_lossy (gen, "1.0.0");
  kist_json_gen_str_lossy (gen, "ociVersionMax");
  kist_json_gen_str_lossy (gen, "1.2.0");
  str_array (gen, "hooks", hooks);
  str_array (gen, "mountOptions", mount_options);
  kist_json_gen_str_lossy (gen, "linux");
  yajl_gen_map_open (gen);
  str_array (gen, "namespaces", namespaces);
  kist_json_gen_str_lossy (gen, "capabilities");
  yajl_gen_array_open (gen);
  for (int c = 0; c <= KIST_CAP_LAST_KNOWN; c++)
    if (kist_cap_name (c))
      kist_json_gen_str_lossy (gen, kist_cap_name (c));
  yajl_gen_array_close (gen);
  kist_json_gen_str_lossy (gen, "cgroup");
  yajl_gen_map_open (gen);
  kist_json_gen_str_lossy (gen, "v1");
  yajl_gen_bool (gen, 0);
  kist_json_gen_str_lossy (gen, "v2");
  yajl_gen_bool (gen, 1);
  kist_json_gen_str_lossy (gen, "systemd");
  yajl_gen_bool (gen, 0);
  yajl_gen_map_close (gen);
  /* The seccomp object is made by the seccomp layer; splice it in verbatim. */
  kist_json_gen_str_lossy (gen, "seccomp");
  _cleanup_free_ char *sec = kist_seccomp_features_json ();
  yajl_gen_number (gen, sec, strlen (sec));
  kist_json_gen_str_lossy (gen, "apparmor");
  yajl_gen_map_open (gen);
  kist_json_gen_str_lossy (gen, "enabled");
  yajl_gen_bool (gen, 0);
  yajl_gen_map_close (gen);
  kist_json_gen_str_lossy (gen, "selinux");
  yajl_gen_map_open (gen);
  kist_json_gen_str_lossy (gen, "enabled");
  yajl_gen_bool (gen, 0);
  yajl_gen_map_close (gen);
  /* Idmapped mounts (mounts_idmap.c): podman looks here before it asks. */
  kist_json_gen_str_lossy (gen, "mountExtensions");
  yajl_gen_map_open (gen);
  kist_json_gen_str_lossy (gen, "idmap");
  yajl_gen_map_open (gen);
  kist_json_gen_str_lossy (gen, "enabled");
  yajl_gen_bool (gen, 1);
  yajl_gen_map_close (gen);
  yajl_gen_map_close (gen);
  yajl_gen_map_close (gen);
  kist_json_gen_str_lossy (gen, "annotations");
  yajl_gen_map_open (gen);
  kist_json_gen_str_lossy (gen, "run.kist.version");
  kist_json_gen_str_lossy (gen, KIST_VERSION);
  kist_json_gen_str_lossy (gen, "run.kist.seccomp.profile");
  kist_json_gen_str_lossy (gen, "default, strict or a path to an OCI linux.seccomp JSON file");
  /* The report's vocabulary, from the layer registry: every entry name a
   * report may hold ("rlimit.*": every rlimit.NAME), comma separated. */
  kist_json_gen_str_lossy (gen, "run.kist.report.layers");
  _cleanup_free_ char *names = NULL;
  kist_layer_vocabulary (add_name, &names);
  kist_json_gen_str_lossy (gen, names ? names : "");
  yajl_gen_map_close (gen);
  yajl_gen_map_close (gen);
  _cleanup_free_ char *json = kist_json_gen_take (gen);
  puts (json);
  return 0;
}
