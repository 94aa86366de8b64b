/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for runtime/spec.c and runtime/spec_default.c. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "resources.h"
#include "spec_json.h"
#include "spec.h"
#include "util.h"
#include "unit.h"

/* Test documents are written with ' for " to stay readable; no test value
 * needs a real single quote. */
static char *
q (const char *s)
{
  char *r = xstrdup (s);
  for (char *c = r; *c; c++)
    if (*c == '\'')
      *c = '"';
  return r;
}

/* Parse a '-quoted document; returns NULL on success, else the error message. */
static char *
parse_msg (const char *doc)
{
  _cleanup_free_ char *json = q (doc);
  struct kist_spec *s = NULL;
  struct kist_error *err = NULL;
  int r = kist_spec_parse (json, strlen (json), &s, &err);
  if (r == 0)
    {
      ck_assert_ptr_null (err);
      ck_assert_ptr_nonnull (s);
      kist_spec_free (s);
      return NULL;
    }
  ck_assert_int_lt (r, 0);
  ck_assert_ptr_nonnull (err);
  ck_assert_ptr_null (s);
  char *m = xstrdup (err->msg);
  kist_error_free (err);
  return m;
}

#define DEF_PROC "'args':['sh'],'cwd':'/'"
#define DEF_MOUNTS "{'destination':'/proc','type':'proc','source':'proc'}"

/* A minimal valid config with the given process body, mounts body, linux body
 * and extra top-level members (NULL: defaults). */
static char *
cfg (const char *proc, const char *mounts, const char *linux_, const char *extra)
{
  return xasprintf ("{'ociVersion':'1.2.0','root':{'path':'rootfs'},'process':{%s},"
                    "'mounts':[%s],'linux':{%s}%s%s}",
                    proc ? proc : DEF_PROC, mounts ? mounts : DEF_MOUNTS, linux_ ? linux_ : "",
                    extra ? "," : "", extra ? extra : "");
}

static const char *full_config
    = "{"
      " 'ociVersion': '1.2.0',"
      " 'root': {'path': 'rootfs', 'readonly': true},"
      " 'hostname': 'box', 'domainname': 'example.org',"
      " 'unknownTopLevel': {'whatever': [1, 2, 3]},"
      " 'mounts': ["
      "   {'destination': '/proc', 'type': 'proc', 'source': 'proc'},"
      "   {'destination': '/dev', 'type': 'tmpfs', 'source': 'tmpfs',"
      "    'options': ['nosuid', 'mode=755']},"
      "   {'destination': '/data', 'source': '/srv/data', 'options': ['rbind', 'ro'],"
      "    'uidMappings': [{'containerID': 0, 'hostID': 1000, 'size': 1}],"
      "    'gidMappings': [{'containerID': 0, 'hostID': 1000, 'size': 1},"
      "                    {'containerID': 1, 'hostID': 2000, 'size': 1}]}"
      " ],"
      " 'process': {"
      "   'terminal': true, 'consoleSize': {'height': 24, 'width': 80},"
      "   'user': {'uid': 1000, 'gid': 100, 'umask': 18, 'additionalGids': [5, 4294967295]},"
      "   'args': ['/bin/sh', '-c', 'echo hi'],"
      "   'env': ['PATH=/bin', 'EMPTY='],"
      "   'cwd': '/home',"
      "   'capabilities': {'bounding': ['CAP_KILL', 'CAP_NOT_A_CAP'], 'effective': [],"
      "                    'ambient': ['CAP_NET_RAW']},"
      "   'rlimits': [{'type': 'RLIMIT_NOFILE', 'soft': 1024, 'hard': 4096},"
      "               {'type': 'RLIMIT_CORE', 'soft': 0, 'hard': 18446744073709551615}],"
      "   'noNewPrivileges': true, 'oomScoreAdj': -1000,"
      "   'apparmorProfile': 'prof', 'selinuxLabel': '',"
      "   'ioPriority': {'class': 'IOPRIO_CLASS_IDLE'}"
      " },"
      " 'linux': {"
      "   'namespaces': [{'type': 'pid'}, {'type': 'network', 'path': '/run/netns/x'},"
      "                  {'type': 'mount'}, {'type': 'user'}, {'type': 'time'}],"
      "   'uidMappings': [{'containerID': 0, 'hostID': 100000, 'size': 65536}],"
      "   'gidMappings': [{'containerID': 0, 'hostID': 200000, 'size': 10}],"
      "   'timeOffsets': {'monotonic': {'secs': -5, 'nanosecs': 999999999},"
      "                   'boottime': {'secs': 9223372036854775807}},"
      "   'devices': [{'path': '/dev/fuse', 'type': 'c', 'major': 10, 'minor': 229,"
      "                'fileMode': 438, 'uid': 0, 'gid': 0},"
      "               {'path': '/dev/fifo', 'type': 'p'}],"
      "   'sysctl': {'net.ipv4.ip_forward': '1', 'kernel.msgmax': '8192'},"
      "   'cgroupsPath': '/kist/c1',"
      "   'resources': {'memory': {'limit': 1000}},"
      "   'seccomp': {'defaultAction': 'SCMP_ACT_ALLOW'},"
      "   'rootfsPropagation': 'rslave',"
      "   'maskedPaths': ['/proc/kcore'], 'readonlyPaths': ['/proc/sys', '/proc/bus'],"
      "   'mountLabel': 'lbl', 'personality': {'domain': 'LINUX'},"
      "   'netDevices': {'eth1': {'name': 'ctr0'}, 'eth2': {}, 'eth3': {'name': ''}}"
      " },"
      " 'hooks': {"
      "   'prestart': [{'path': '/usr/bin/setup', 'args': ['setup', 'x'], 'env': ['A=1'],"
      "                 'timeout': 5}],"
      "   'poststop': [{'path': '/bin/true'}, {'path': '/bin/false'}]"
      " },"
      " 'annotations': {'org.example.key': 'v1', 'other': 'v2'}"
      "}";

START_TEST (test_full_config)
{
  _cleanup_free_ char *json = q (full_config);
  _cleanup_spec_ struct kist_spec *s = NULL;
  struct kist_error *err = NULL;
  int r = kist_spec_parse (json, strlen (json), &s, &err);
  if (r < 0)
    ck_abort_msg ("parse failed: %s", err->msg);
  ck_assert_str_eq (s->oci_version, "1.2.0");
  ck_assert_str_eq (s->root_path, "rootfs");
  ck_assert (s->root_readonly);
  ck_assert_str_eq (s->hostname, "box");
  ck_assert_str_eq (s->domainname, "example.org");

  ck_assert_uint_eq (s->n_mounts, 3);
  ck_assert_str_eq (s->mounts[0].destination, "/proc");
  ck_assert_str_eq (s->mounts[0].type, "proc");
  ck_assert_ptr_null (s->mounts[0].options);
  ck_assert_str_eq (s->mounts[1].options[1], "mode=755");
  ck_assert_ptr_null (s->mounts[1].options[2]);
  ck_assert_ptr_null (s->mounts[2].type);
  ck_assert_str_eq (s->mounts[2].source, "/srv/data");
  ck_assert_uint_eq (s->mounts[2].n_uid_mappings, 1);
  ck_assert_uint_eq (s->mounts[2].n_gid_mappings, 2);

  struct kist_process *p = s->process;
  ck_assert_ptr_nonnull (p);
  ck_assert (p->terminal);
  ck_assert (p->has_console_size);
  ck_assert_uint_eq (p->console_height, 24);
  ck_assert_uint_eq (p->console_width, 80);
  ck_assert_uint_eq (p->user.uid, 1000);
  ck_assert_uint_eq (p->user.gid, 100);
  ck_assert (p->user.has_umask);
  ck_assert_uint_eq (p->user.umask, 18);
  ck_assert (p->user.has_additional_gids);
  ck_assert_uint_eq (p->user.n_additional_gids, 2);
  ck_assert_uint_eq (p->user.additional_gids[1], 4294967295u);
  ck_assert_uint_eq (kist_strv_len (p->args), 3);
  ck_assert_str_eq (p->args[2], "echo hi");
  ck_assert_str_eq (p->env[1], "EMPTY=");
  ck_assert_ptr_null (p->env[2]);
  ck_assert_str_eq (p->cwd, "/home");
  ck_assert_ptr_nonnull (p->capabilities);
  ck_assert_str_eq (p->capabilities->bounding[1], "CAP_NOT_A_CAP");
  ck_assert_ptr_nonnull (p->capabilities->effective);
  ck_assert_ptr_null (p->capabilities->effective[0]);
  ck_assert_ptr_null (p->capabilities->permitted);
  ck_assert_ptr_null (p->capabilities->inheritable);
  ck_assert_str_eq (p->capabilities->ambient[0], "CAP_NET_RAW");
  ck_assert_uint_eq (p->n_rlimits, 2);
  ck_assert_str_eq (p->rlimits[0].type, "RLIMIT_NOFILE");
  ck_assert_uint_eq (p->rlimits[0].soft, 1024);
  ck_assert_uint_eq (p->rlimits[0].hard, 4096);
  ck_assert (p->rlimits[1].hard == UINT64_MAX);
  ck_assert (p->no_new_privileges);
  ck_assert (p->has_oom_score_adj);
  ck_assert_int_eq (p->oom_score_adj, -1000);
  ck_assert_str_eq (p->apparmor_profile, "prof");
  ck_assert_ptr_null (p->selinux_label);
  ck_assert (p->has_io_priority);
  ck_assert_int_eq (p->io_priority.klass, 3);
  ck_assert_int_eq (p->io_priority.priority, 0); /* missing: 0, as runc */
  ck_assert (!p->has_scheduler);
  ck_assert (!p->has_exec_cpu_affinity);

  struct kist_linux *l = s->linux_;
  ck_assert_ptr_nonnull (l);
  ck_assert (l->ns[KIST_NS_PID].present);
  ck_assert_ptr_null (l->ns[KIST_NS_PID].path);
  ck_assert (l->ns[KIST_NS_NET].present);
  ck_assert_str_eq (l->ns[KIST_NS_NET].path, "/run/netns/x");
  ck_assert (l->ns[KIST_NS_MOUNT].present);
  ck_assert (l->ns[KIST_NS_USER].present);
  ck_assert (l->ns[KIST_NS_TIME].present);
  ck_assert (!l->ns[KIST_NS_UTS].present);
  ck_assert (!l->ns[KIST_NS_IPC].present);
  ck_assert (!l->ns[KIST_NS_CGROUP].present);
  ck_assert_uint_eq (l->n_uid_mappings, 1);
  ck_assert_uint_eq (l->uid_mappings[0].host_id, 100000);
  ck_assert_uint_eq (l->uid_mappings[0].size, 65536);
  ck_assert_uint_eq (l->n_gid_mappings, 1);
  ck_assert_uint_eq (l->gid_mappings[0].host_id, 200000);
  ck_assert (l->time_monotonic.present);
  ck_assert_int_eq (l->time_monotonic.secs, -5);
  ck_assert_uint_eq (l->time_monotonic.nanosecs, 999999999);
  ck_assert (l->time_boottime.present);
  ck_assert (l->time_boottime.secs == INT64_MAX);
  ck_assert_uint_eq (l->time_boottime.nanosecs, 0);
  ck_assert_uint_eq (l->n_devices, 2);
  ck_assert_str_eq (l->devices[0].path, "/dev/fuse");
  ck_assert_int_eq (l->devices[0].type, 'c');
  ck_assert_int_eq (l->devices[0].major, 10);
  ck_assert_int_eq (l->devices[0].minor, 229);
  ck_assert (l->devices[0].has_file_mode && l->devices[0].has_uid && l->devices[0].has_gid);
  ck_assert_uint_eq (l->devices[0].file_mode, 0666);
  ck_assert_int_eq (l->devices[1].type, 'p');
  ck_assert (!l->devices[1].has_file_mode);
  ck_assert_uint_eq (l->n_sysctl, 2);
  ck_assert_str_eq (l->sysctl[0].key, "net.ipv4.ip_forward");
  ck_assert_str_eq (l->sysctl[0].value, "1");
  ck_assert_str_eq (l->sysctl[1].value, "8192");
  ck_assert_str_eq (l->cgroups_path, "/kist/c1");
  ck_assert_ptr_nonnull (l->resources);
  ck_assert_int_eq (l->resources->memory.limit, 1000);
  ck_assert (YAJL_IS_OBJECT (l->seccomp));
  ck_assert_str_eq (l->rootfs_propagation, "rslave");
  ck_assert_str_eq (l->masked_paths[0], "/proc/kcore");
  ck_assert_ptr_null (l->masked_paths[1]);
  ck_assert_str_eq (l->readonly_paths[1], "/proc/bus");
  ck_assert_str_eq (l->mount_label, "lbl");
  ck_assert (l->has_personality);
  ck_assert_uint_eq (l->personality.domain, 0);
  ck_assert (!l->has_intel_rdt);
  ck_assert (!l->has_memory_policy);
  /* linux.netDevices: name absent or "" means the same name inside. */
  ck_assert_uint_eq (l->n_net_devices, 3);
  ck_assert_str_eq (l->net_devices[0].host, "eth1");
  ck_assert_str_eq (l->net_devices[0].name, "ctr0");
  ck_assert_str_eq (l->net_devices[1].host, "eth2");
  ck_assert_str_eq (l->net_devices[1].name, "eth2");
  ck_assert_str_eq (l->net_devices[2].name, "eth3");

  ck_assert_ptr_nonnull (s->hooks);
  ck_assert_uint_eq (s->hooks->n_prestart, 1);
  ck_assert_str_eq (s->hooks->prestart[0].path, "/usr/bin/setup");
  ck_assert_str_eq (s->hooks->prestart[0].args[1], "x");
  ck_assert_str_eq (s->hooks->prestart[0].env[0], "A=1");
  ck_assert (s->hooks->prestart[0].has_timeout);
  ck_assert_int_eq (s->hooks->prestart[0].timeout, 5);
  ck_assert_uint_eq (s->hooks->n_poststop, 2);
  ck_assert_str_eq (s->hooks->poststop[1].path, "/bin/false");
  ck_assert_ptr_null (s->hooks->poststop[1].args);
  ck_assert (!s->hooks->poststop[1].has_timeout);
  ck_assert_uint_eq (s->hooks->n_create_runtime, 0);
  ck_assert_ptr_null (s->hooks->create_runtime);

  ck_assert_uint_eq (s->n_annotations, 2);
  ck_assert_str_eq (kist_spec_annotation (s, "org.example.key"), "v1");
  ck_assert_str_eq (kist_spec_annotation (s, "other"), "v2");
  ck_assert_ptr_null (kist_spec_annotation (s, "missing"));
  ck_assert_ptr_nonnull (s->tree);
}
END_TEST

START_TEST (test_minimal_config)
{
  _cleanup_free_ char *json = q ("{'ociVersion':'1.0.2-dev','root':{'path':'/abs/root'}}");
  _cleanup_spec_ struct kist_spec *s = NULL;
  struct kist_error *err = NULL;
  ck_assert_int_eq (kist_spec_parse (json, strlen (json), &s, &err), 0);
  ck_assert_ptr_null (s->process);
  ck_assert_ptr_null (s->linux_);
  ck_assert_ptr_null (s->hooks);
  ck_assert_ptr_null (s->hostname);
  ck_assert_ptr_null (s->mounts);
  ck_assert_uint_eq (s->n_mounts, 0);
  ck_assert (!s->root_readonly);
  ck_assert_ptr_null (kist_spec_annotation (s, "x"));
}
END_TEST

/* Nulls count as absent, the last duplicate key wins, process defaults. */
START_TEST (test_nulls_and_defaults)
{
  _cleanup_free_ char *json
      = q ("{'ociVersion':'1.1.0','root':{'path':'r','readonly':null},'hostname':'',"
           "'hooks':null,'linux':{'namespaces':null,'cgroupsPath':'','seccomp':null,"
           "'namespaces':[{'type':'uts','path':''}]},"
           "'process':{'args':['a'],'cwd':'/','apparmorProfile':null}, 'hostname':'last'}");
  _cleanup_spec_ struct kist_spec *s = NULL;
  struct kist_error *err = NULL;
  int r = kist_spec_parse (json, strlen (json), &s, &err);
  if (r < 0)
    ck_abort_msg ("parse failed: %s", err->msg);
  ck_assert_str_eq (s->hostname, "last");
  ck_assert_ptr_null (s->hooks);
  ck_assert (s->linux_->ns[KIST_NS_UTS].present);
  ck_assert_ptr_null (s->linux_->ns[KIST_NS_UTS].path);
  ck_assert_ptr_null (s->linux_->cgroups_path);
  ck_assert_ptr_null (s->linux_->seccomp);
  ck_assert_ptr_nonnull (s->process->env);
  ck_assert_ptr_null (s->process->env[0]);
  ck_assert_ptr_null (s->process->capabilities);
  ck_assert_ptr_null (s->process->apparmor_profile);
  ck_assert (!s->process->has_oom_score_adj);
  ck_assert (!s->process->user.has_umask);
  ck_assert (!s->process->user.has_additional_gids);
  ck_assert_uint_eq (s->process->user.uid, 0);
}
END_TEST

START_TEST (test_malformed)
{
  static const char *docs[] = { "{'ociVersion': x}", "{'ociVersion':'1.0.0',", "[1,2",
                                "{} {}", "{'a':1,}" };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (docs); i++)
    {
      _cleanup_free_ char *m = parse_msg (docs[i]);
      ck_assert_ptr_nonnull (m);
      ck_assert_msg (strncmp (m, "config.json: malformed JSON: ", 29) == 0, "%s", m);
      ck_assert_msg (strchr (m, '\n') == NULL, "message has a newline: %s", m);
    }
  _cleanup_free_ char *m = parse_msg ("{'ociVersion': x}");
  ck_assert_msg (strstr (m, "invalid char in json text") != NULL, "%s", m);

  struct kist_spec *s = NULL;
  struct kist_error *err = NULL;
  ck_assert_int_lt (kist_spec_parse ("", 0, &s, &err), 0);
  ck_assert_str_eq (err->msg, "config.json: malformed JSON: the document is empty");
  kist_error_free (err);
  err = NULL;

  /* len is honoured: the document need not be NUL-terminated. */
  const char buf[] = "{'ociVersion':'1.0.0','root':{'path':'r'}}XXXX";
  _cleanup_free_ char *j = q (buf);
  ck_assert_int_eq (kist_spec_parse (j, strlen (j) - 4, &s, &err), 0);
  kist_spec_free (s);
  s = NULL;

  /* An embedded NUL byte. */
  const char nul[] = "{\"ociVersion\":\"1.0.0\"}\0{}";
  ck_assert_int_lt (kist_spec_parse (nul, sizeof nul - 1, &s, &err), 0);
  ck_assert_str_eq (err->msg, "config.json: malformed JSON: NUL byte at offset 22");
  kist_error_free (err);
  err = NULL;

  /* Top level must be an object. */
  _cleanup_free_ char *m2 = parse_msg ("[1]");
  ck_assert_str_eq (m2, "config.json: expected a JSON object at the top level");

  /* \u0000 would cut a string short: refused.  An escaped backslash
   * followed by u0000 is an ordinary string. */
  _cleanup_free_ char *m3
      = parse_msg ("{'ociVersion':'1.0.0','root':{'path':'r\\u0000x'}}");
  ck_assert_msg (strstr (m3, "\\u0000") != NULL, "%s", m3);
  _cleanup_free_ char *m4
      = parse_msg ("{'ociVersion':'1.0.0','root':{'path':'r\\\\u0000x'}}");
  ck_assert_ptr_null (m4);

  /* Deep nesting is refused before yajl builds a tree. */
  size_t depth = 100000;
  _cleanup_free_ char *deep = xmalloc (2 * depth + 64);
  size_t n = (size_t) sprintf (deep, "{\"ociVersion\":\"1.0.0\",\"x\":");
  memset (deep + n, '[', depth);
  memset (deep + n + depth, ']', depth);
  strcpy (deep + n + 2 * depth, "}");
  ck_assert_int_lt (kist_spec_parse (deep, strlen (deep), &s, &err), 0);
  ck_assert_msg (strstr (err->msg, "nested deeper than") != NULL, "%s", err->msg);
  kist_error_free (err);
  err = NULL;

  /* Comments (which yajl_tree accepts) do not confuse the scanner. */
  _cleanup_free_ char *m5
      = parse_msg ("/* it's \" [[[ */ {'ociVersion':'1.0.0', // ' {{ \n 'root':{'path':'r'}}");
  ck_assert_ptr_null (m5);
}
END_TEST

struct bad_case
{
  const char *proc, *mounts, *linux_, *extra;
  const char *msg;   /* exact expected message */
};

static const struct bad_case bad_cases[] = {
  /* process */
  { "'args':['sh', 1],'cwd':'/'", NULL, NULL, NULL,
    "config.json: process.args[1]: expected string" },
  { "'args':'sh','cwd':'/'", NULL, NULL, NULL, "config.json: process.args: expected array" },
  { "'args':[],'cwd':'/'", NULL, NULL, NULL,
    "config.json: process.args: must contain at least one element (the command to run)" },
  { "'cwd':'/'", NULL, NULL, NULL, "config.json: process.args: required field is missing" },
  { "'args':['sh']", NULL, NULL, NULL, "config.json: process.cwd: required field is missing" },
  { "'args':['sh'],'cwd':'home'", NULL, NULL, NULL,
    "config.json: process.cwd: must be an absolute path, got \"home\"" },
  { DEF_PROC ",'env':['A=1','NOEQUALS']", NULL, NULL, NULL,
    "config.json: process.env[1]: \"NOEQUALS\" is not of the form KEY=VALUE" },
  { DEF_PROC ",'env':{}", NULL, NULL, NULL, "config.json: process.env: expected array" },
  { DEF_PROC ",'terminal':'yes'", NULL, NULL, NULL,
    "config.json: process.terminal: expected boolean" },
  { DEF_PROC ",'user':{'uid':0}", NULL, NULL, NULL,
    "config.json: process.user.gid: required field is missing" },
  { DEF_PROC ",'user':{'uid':-1,'gid':0}", NULL, NULL, NULL,
    "config.json: process.user.uid: expected unsigned 32-bit integer" },
  { DEF_PROC ",'user':{'uid':4294967296,'gid':0}", NULL, NULL, NULL,
    "config.json: process.user.uid: expected unsigned 32-bit integer" },
  { DEF_PROC ",'user':{'uid':0,'gid':'0'}", NULL, NULL, NULL,
    "config.json: process.user.gid: expected unsigned 32-bit integer" },
  { DEF_PROC ",'user':{'uid':0,'gid':0,'umask':1.5}", NULL, NULL, NULL,
    "config.json: process.user.umask: expected unsigned 32-bit integer" },
  { DEF_PROC ",'user':{'uid':0,'gid':0,'additionalGids':[1,'x']}", NULL, NULL, NULL,
    "config.json: process.user.additionalGids[1]: expected unsigned 32-bit integer" },
  { DEF_PROC ",'capabilities':{'bounding':'CAP_KILL'}", NULL, NULL, NULL,
    "config.json: process.capabilities.bounding: expected array" },
  { DEF_PROC ",'capabilities':{'ambient':[true]}", NULL, NULL, NULL,
    "config.json: process.capabilities.ambient[0]: expected string" },
  { DEF_PROC ",'rlimits':[{'type':'RLIMIT_NOFILE','soft':1,'hard':-1}]", NULL, NULL, NULL,
    "config.json: process.rlimits[0].hard: expected unsigned 64-bit integer" },
  { DEF_PROC ",'rlimits':[{'type':'RLIMIT_NOFILE','soft':1,'hard':18446744073709551616}]", NULL,
    NULL, NULL, "config.json: process.rlimits[0].hard: expected unsigned 64-bit integer" },
  { DEF_PROC ",'rlimits':[{'type':'RLIMIT_NOFILE','soft':1e3,'hard':1}]", NULL, NULL, NULL,
    "config.json: process.rlimits[0].soft: expected unsigned 64-bit integer" },
  { DEF_PROC ",'rlimits':[{'type':'RLIMIT_NOFILE','hard':1}]", NULL, NULL, NULL,
    "config.json: process.rlimits[0].soft: required field is missing" },
  { DEF_PROC ",'rlimits':[{'soft':1,'hard':1}]", NULL, NULL, NULL,
    "config.json: process.rlimits[0].type: required field is missing" },
  { DEF_PROC ",'rlimits':[{'type':'RLIMIT_CORE','soft':1,'hard':1},"
             "{'type':'RLIMIT_NOFILE','soft':1,'hard':1},"
             "{'type':'RLIMIT_CORE','soft':2,'hard':2}]",
    NULL, NULL, NULL,
    "config.json: process.rlimits[2].type: duplicate rlimit \"RLIMIT_CORE\" (already set by "
    "process.rlimits[0])" },
  { DEF_PROC ",'rlimits':{}", NULL, NULL, NULL, "config.json: process.rlimits: expected array" },
  { DEF_PROC ",'oomScoreAdj':1001", NULL, NULL, NULL,
    "config.json: process.oomScoreAdj: must be between -1000 and 1000, got 1001" },
  { DEF_PROC ",'oomScoreAdj':'0'", NULL, NULL, NULL,
    "config.json: process.oomScoreAdj: expected integer" },
  { DEF_PROC ",'consoleSize':{'height':1}", NULL, NULL, NULL,
    "config.json: process.consoleSize.width: required field is missing" },
  { DEF_PROC ",'selinuxLabel':5", NULL, NULL, NULL,
    "config.json: process.selinuxLabel: expected string" },
  { DEF_PROC ",'scheduler':[]", NULL, NULL, NULL,
    "config.json: process.scheduler: expected object" },
  /* ioPriority, scheduler, execCPUAffinity (sched.c) */
  { DEF_PROC ",'ioPriority':{'class':'IOPRIO_CLASS_NONE','priority':0}", NULL, NULL, NULL,
    "config.json: process.ioPriority.class: unknown value \"IOPRIO_CLASS_NONE\" (expected one "
    "of IOPRIO_CLASS_RT, IOPRIO_CLASS_BE, IOPRIO_CLASS_IDLE)" },
  { DEF_PROC ",'ioPriority':{'priority':0}", NULL, NULL, NULL,
    "config.json: process.ioPriority.class: required field is missing" },
  { DEF_PROC ",'ioPriority':{'class':'IOPRIO_CLASS_BE','priority':-1}", NULL, NULL, NULL,
    "config.json: process.ioPriority.priority: must be between 0 and 7, got -1" },
  { DEF_PROC ",'ioPriority':{'class':2,'priority':1}", NULL, NULL, NULL,
    "config.json: process.ioPriority.class: expected string" },
  { DEF_PROC ",'scheduler':{'nice':1}", NULL, NULL, NULL,
    "config.json: process.scheduler.policy: required field is missing" },
  { DEF_PROC ",'scheduler':{'policy':'SCHED_NORMAL'}", NULL, NULL, NULL,
    "config.json: process.scheduler.policy: unknown value \"SCHED_NORMAL\" (expected one of "
    "SCHED_OTHER, SCHED_FIFO, SCHED_RR, SCHED_BATCH, SCHED_ISO, SCHED_IDLE, SCHED_DEADLINE)" },
  { DEF_PROC ",'scheduler':{'policy':'SCHED_OTHER','nice':-21}", NULL, NULL, NULL,
    "config.json: process.scheduler.nice: must be between -20 and 19, got -21" },
  { DEF_PROC ",'scheduler':{'policy':'SCHED_FIFO','priority':2147483648}", NULL, NULL, NULL,
    "config.json: process.scheduler.priority: must be greater than -2147483649 and fit in an "
    "int, got 2147483648" },
  { DEF_PROC ",'scheduler':{'policy':'SCHED_OTHER','flags':['SCHED_FLAG_RECLAIM',1]}", NULL,
    NULL, NULL, "config.json: process.scheduler.flags[1]: expected string" },
  { DEF_PROC ",'scheduler':{'policy':'SCHED_DEADLINE','runtime':-1}", NULL, NULL, NULL,
    "config.json: process.scheduler.runtime: expected unsigned 64-bit integer" },
  { DEF_PROC ",'execCPUAffinity':{'initial':'1-0'}", NULL, NULL, NULL,
    "config.json: process.execCPUAffinity.initial: \"1-0\" is not a list of CPU numbers (at "
    "offset 2; expected comma-separated numbers and ranges such as \"0-3,7\")" },
  { DEF_PROC ",'execCPUAffinity':{'final':'0,x'}", NULL, NULL, NULL,
    "config.json: process.execCPUAffinity.final: \"0,x\" is not a list of CPU numbers (at "
    "offset 2; expected comma-separated numbers and ranges such as \"0-3,7\")" },
  { DEF_PROC ",'execCPUAffinity':{'final':'4096'}", NULL, NULL, NULL,
    "config.json: process.execCPUAffinity.final: \"4096\": CPU numbers above 4095 are not "
    "supported" },
  { DEF_PROC ",'execCPUAffinity':{'final':7}", NULL, NULL, NULL,
    "config.json: process.execCPUAffinity.final: expected string" },
  { "'args':['sh'],'cwd':'/'", NULL, NULL, "'process':[]",
    "config.json: process: expected object" },
  /* mounts */
  { NULL, DEF_MOUNTS ",{'destination':'/a'},{'destination':'rel'}", NULL, NULL,
    "config.json: mounts[2].destination: must be an absolute path, got \"rel\"" },
  { NULL, DEF_MOUNTS ",{'destination':'/a'},{'destination':7}", NULL, NULL,
    "config.json: mounts[2].destination: expected string" },
  { NULL, "{'type':'tmpfs'}", NULL, NULL,
    "config.json: mounts[0].destination: required field is missing" },
  { NULL, "{'destination':'/a','options':'ro'}", NULL, NULL,
    "config.json: mounts[0].options: expected array" },
  { NULL, "{'destination':'/a','uidMappings':{}}", NULL, NULL,
    "config.json: mounts[0].uidMappings: expected array" },
  { NULL, "'x'", NULL, NULL, "config.json: mounts[0]: expected object" },
  /* linux */
  { NULL, NULL, "'namespaces':[{'type':5}]", NULL,
    "config.json: linux.namespaces[0].type: expected string" },
  { NULL, NULL, "'namespaces':[{'type':'net'}]", NULL,
    "config.json: linux.namespaces[0].type: unknown namespace type \"net\" (expected one of pid, "
    "network, mount, ipc, uts, user, cgroup, time)" },
  { NULL, NULL, "'namespaces':[{'type':'pid'},{'type':'uts'},{'type':'pid'}]", NULL,
    "config.json: linux.namespaces[2].type: duplicate namespace type \"pid\" (already listed at "
    "linux.namespaces[0])" },
  { NULL, NULL, "'namespaces':[{'type':'network','path':'run/netns/x'}]", NULL,
    "config.json: linux.namespaces[0].path: must be an absolute path, got \"run/netns/x\"" },
  { NULL, NULL, "'namespaces':[{}]", NULL,
    "config.json: linux.namespaces[0].type: required field is missing" },
  { NULL, NULL, "'uidMappings':[{'containerID':0,'hostID':0,'size':'1'}]", NULL,
    "config.json: linux.uidMappings[0].size: expected unsigned 32-bit integer" },
  { NULL, NULL, "'uidMappings':[{'containerID':0,'hostID':0,'size':0}]", NULL,
    "config.json: linux.uidMappings[0].size: must be greater than 0" },
  { NULL, NULL, "'gidMappings':[{'containerID':0,'size':1}]", NULL,
    "config.json: linux.gidMappings[0].hostID: required field is missing" },
  { NULL, NULL, "'timeOffsets':{'monotonic':{'secs':'1'}}", NULL,
    "config.json: linux.timeOffsets.monotonic.secs: expected 64-bit integer" },
  { NULL, NULL, "'timeOffsets':{'boottime':{'nanosecs':1000000000}}", NULL,
    "config.json: linux.timeOffsets.boottime.nanosecs: must be less than 1000000000, got "
    "1000000000" },
  { NULL, NULL, "'timeOffsets':{'realtime':{}}", NULL,
    "config.json: linux.timeOffsets.realtime: unknown clock (expected monotonic or boottime)" },
  { NULL, NULL, "'devices':[{'path':'/dev/x','type':'c','major':1}]", NULL,
    "config.json: linux.devices[0].minor: required field is missing" },
  { NULL, NULL, "'devices':[{'path':'dev/x','type':'b','major':1,'minor':1}]", NULL,
    "config.json: linux.devices[0].path: must be an absolute path, got \"dev/x\"" },
  { NULL, NULL, "'devices':[{'path':'/dev/x','type':'x','major':1,'minor':1}]", NULL,
    "config.json: linux.devices[0].type: unknown device type \"x\" (expected c, b, u or p)" },
  { NULL, NULL, "'devices':[{'path':'/dev/x','type':'u','major':1,'minor':1,'fileMode':-1}]",
    NULL, "config.json: linux.devices[0].fileMode: expected unsigned 32-bit integer" },
  { NULL, NULL, "'sysctl':{'net.ipv4.ip_forward':1}", NULL,
    "config.json: linux.sysctl[\"net.ipv4.ip_forward\"]: expected string" },
  { NULL, NULL, "'sysctl':[]", NULL, "config.json: linux.sysctl: expected object" },
  { NULL, NULL, "'maskedPaths':['/ok','proc/kcore']", NULL,
    "config.json: linux.maskedPaths[1]: must be an absolute path, got \"proc/kcore\"" },
  { NULL, NULL, "'readonlyPaths':['']", NULL,
    "config.json: linux.readonlyPaths[0]: must be an absolute path, got \"\"" },
  { NULL, NULL, "'rootfsPropagation':'recursive'", NULL,
    "config.json: linux.rootfsPropagation: unknown propagation \"recursive\" (expected one of "
    "private, rprivate, slave, rslave, shared, rshared, unbindable, runbindable)" },
  { NULL, NULL, "'resources':[]", NULL, "config.json: linux.resources: expected object" },
  { NULL, NULL, "'seccomp':'default'", NULL, "config.json: linux.seccomp: expected object" },
  { NULL, NULL, "'cgroupsPath':{}", NULL, "config.json: linux.cgroupsPath: expected string" },
  { NULL, NULL, "'intelRdt':true", NULL, "config.json: linux.intelRdt: expected object" },
  { NULL, NULL, "'mountLabel':1", NULL, "config.json: linux.mountLabel: expected string" },
  /* personality, memoryPolicy (personality.c) */
  { NULL, NULL, "'personality':{}", NULL,
    "config.json: linux.personality.domain: required field is missing" },
  { NULL, NULL, "'personality':{'domain':'PER_LINUX32'}", NULL,
    "config.json: linux.personality.domain: unknown value \"PER_LINUX32\" (expected one of "
    "LINUX, LINUX32)" },
  { NULL, NULL, "'personality':{'domain':'LINUX','flags':['X']}", NULL,
    "config.json: linux.personality.flags[0]: runtime-spec defines no personality flags (kist "
    "sets the domain only): remove the flags" },
  { NULL, NULL, "'personality':{'domain':'LINUX','flags':'X'}", NULL,
    "config.json: linux.personality.flags: expected array" },
  { NULL, NULL, "'memoryPolicy':{'nodes':'0'}", NULL,
    "config.json: linux.memoryPolicy.mode: required field is missing" },
  { NULL, NULL, "'memoryPolicy':{'mode':'MPOL_BIND','nodes':'0-'}", NULL,
    "config.json: linux.memoryPolicy.nodes: \"0-\" is not a list of NUMA node numbers (at "
    "offset 2; expected comma-separated numbers and ranges such as \"0-3,7\")" },
  { NULL, NULL, "'memoryPolicy':{'mode':'MPOL_BIND','nodes':'0','flags':['MPOL_F_NODE']}", NULL,
    "config.json: linux.memoryPolicy.flags[0]: unknown value \"MPOL_F_NODE\" (expected one of "
    "MPOL_F_STATIC_NODES, MPOL_F_RELATIVE_NODES, MPOL_F_NUMA_BALANCING)" },
  { NULL, NULL,
    "'memoryPolicy':{'mode':'MPOL_BIND','nodes':'0','flags':['MPOL_F_RELATIVE_NODES',"
    "'MPOL_F_STATIC_NODES']}",
    NULL,
    "config.json: linux.memoryPolicy.flags: MPOL_F_STATIC_NODES and MPOL_F_RELATIVE_NODES "
    "exclude each other: keep one" },
  /* top level */
  { NULL, NULL, NULL, "'hostname':1", "config.json: hostname: expected string" },
  { NULL, NULL, NULL, "'linux':[]", "config.json: linux: expected object" },
  { NULL, NULL, NULL, "'annotations':{'a':'b','c':{}}",
    "config.json: annotations.c: expected string" },
  { NULL, NULL, NULL, "'annotations':{'io.x/y':3}",
    "config.json: annotations[\"io.x/y\"]: expected string" },
  /* config.md: annotation keys MUST NOT be empty. */
  { NULL, NULL, NULL, "'annotations':{'a':'b','':'x'}",
    "config.json: annotations: keys must not be empty (name the annotation, e.g. "
    "\"org.example.key\")" },
  { NULL, NULL, NULL, "'hooks':{'prestart':[{'path':'hook'}]}",
    "config.json: hooks.prestart[0].path: must be an absolute path, got \"hook\"" },
  { NULL, NULL, NULL, "'hooks':{'poststop':[{'path':'/h','timeout':0}]}",
    "config.json: hooks.poststop[0].timeout: must be greater than 0 and fit in an int, got 0" },
  { NULL, NULL, NULL, "'hooks':{'createRuntime':[{'path':'/h','args':[1]}]}",
    "config.json: hooks.createRuntime[0].args[0]: expected string" },
  { NULL, NULL, NULL, "'hooks':{'startContainer':[{'path':'/h','env':['X']}]}",
    "config.json: hooks.startContainer[0].env[0]: \"X\" is not of the form KEY=VALUE" },
  { NULL, NULL, NULL, "'hooks':{'createContainer':{}}",
    "config.json: hooks.createContainer: expected array" },
};

START_TEST (test_bad_config)
{
  const struct bad_case *c = &bad_cases[_i];
  _cleanup_free_ char *doc = cfg (c->proc, c->mounts, c->linux_, c->extra);
  _cleanup_free_ char *m = parse_msg (doc);
  ck_assert_msg (m != NULL, "case %d parsed but should fail: %s", _i, doc);
  ck_assert_msg (strcmp (m, c->msg) == 0, "case %d: got\n  %s\nexpected\n  %s", _i, m, c->msg);
}
END_TEST

/* linux.netDevices (net_devices.c): names as the kernel takes them, unique
 * inside, and a network namespace to move them into.  Each case: the
 * netDevices value, with or without a network namespace, and the message
 * after "config.json: linux.netDevices". */
START_TEST (test_net_devices)
{
  static const struct
  {
    bool netns;
    const char *nd, *msg;
  } cases[] = {
    { false, "{'eth0':{}}", ".eth0: a device can only be moved into a network namespace of the "
                            "container, and the config asks for none: add {\"type\": \"network\"} "
                            "(or one with a path) to linux.namespaces" },
    { true, "[]", ": expected object" },
    { true, "{'eth0':1}", ".eth0: expected object" },
    { true, "{'eth0':{'name':7}}", ".eth0.name: expected string" },
    { true, "{'a/b':{}}", "[\"a/b\"]: the device name \"a/b\" contains '/', ':' or white space" },
    { true, "{'':{}}", "[\"\"]: the device name \"\" is empty" },
    { true, "{'..':{}}", "[\"..\"]: the device name \"..\" is . or .." },
    { true, "{'eth0':{'name':'eth:1'}}", ".eth0.name: \"eth:1\" contains '/', ':' or white space" },
    { true, "{'eth0':{'name':'a\\tb'}}", ".eth0.name: \"a\tb\" contains '/', ':' or white space" },
    { true, "{'e':{'name':'abcdefghijklmnop'}}", ".e.name: \"abcdefghijklmnop\" is longer than 15 "
                                                "bytes (IFNAMSIZ)" },
    { true, "{'eth0':{'name':'c0'},'eth1':{'name':'c0'}}",
      ".eth1: its name inside, \"c0\", is also that of linux.netDevices.eth0: a name must be "
      "unique in the container's network namespace" },
  };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (cases); i++)
    {
      _cleanup_free_ char *lx = xasprintf ("%s'netDevices':%s",
                                           cases[i].netns ? "'namespaces':[{'type':'network'}]," : "",
                                           cases[i].nd);
      _cleanup_free_ char *doc = cfg (NULL, NULL, lx, NULL);
      _cleanup_free_ char *m = parse_msg (doc);
      _cleanup_free_ char *want = xasprintf ("config.json: linux.netDevices%s", cases[i].msg);
      ck_assert_msg (m != NULL, "case %zu parsed: %s", i, doc);
      ck_assert_msg (strncmp (m, want, strlen (want)) == 0, "case %zu: got\n  %s\nexpected\n  %s", i,
                     m, want);
    }
  /* Valid: {} needs no network namespace; 15 bytes is the longest name. */
  _cleanup_free_ char *ok1 = cfg (NULL, NULL, "'netDevices':{}", NULL);
  ck_assert_ptr_null (parse_msg (ok1));
  _cleanup_free_ char *ok2
      = cfg (NULL, NULL, "'namespaces':[{'type':'network'}],'netDevices':{'abcdefghijklmno':{}}", NULL);
  ck_assert_ptr_null (parse_msg (ok2));
}
END_TEST

START_TEST (test_top_level_required)
{
  static const struct
  {
    const char *doc, *msg;
  } cases[] = {
    { "{'root':{'path':'r'}}", "config.json: ociVersion: required field is missing" },
    { "{'ociVersion':1,'root':{'path':'r'}}", "config.json: ociVersion: expected string" },
    { "{'ociVersion':'2.0.0','root':{'path':'r'}}",
      "config.json: ociVersion: version \"2.0.0\" is not supported (kist implements "
      "runtime-spec 1.x)" },
    { "{'ociVersion':'10.0','root':{'path':'r'}}",
      "config.json: ociVersion: version \"10.0\" is not supported (kist implements "
      "runtime-spec 1.x)" },
    { "{'ociVersion':'1.0.0'}", "config.json: root: required field is missing" },
    { "{'ociVersion':'1.0.0','root':null}", "config.json: root: required field is missing" },
    { "{'ociVersion':'1.0.0','root':'rootfs'}", "config.json: root: expected object" },
    { "{'ociVersion':'1.0.0','root':{}}", "config.json: root.path: required field is missing" },
    { "{'ociVersion':'1.0.0','root':{'path':''}}", "config.json: root.path: must not be empty" },
    { "{'ociVersion':'1.0.0','root':{'path':'r','readonly':1}}",
      "config.json: root.readonly: expected boolean" },
  };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (cases); i++)
    {
      _cleanup_free_ char *m = parse_msg (cases[i].doc);
      ck_assert_msg (m != NULL, "case %zu parsed", i);
      ck_assert_msg (strcmp (m, cases[i].msg) == 0, "case %zu: got %s", i, m);
    }
}
END_TEST

START_TEST (test_rlimit_range)
{
  _cleanup_free_ char *doc = cfg (
      DEF_PROC ",'rlimits':[{'type':'RLIMIT_AS','soft':18446744073709551615,"
               "'hard':18446744073709551615},{'type':'RLIMIT_CPU','soft':9223372036854775808,"
               "'hard':0}]",
      NULL, NULL, NULL);
  _cleanup_free_ char *json = q (doc);
  _cleanup_spec_ struct kist_spec *s = NULL;
  struct kist_error *err = NULL;
  int r = kist_spec_parse (json, strlen (json), &s, &err);
  if (r < 0)
    ck_abort_msg ("parse failed: %s", err->msg);
  ck_assert (s->process->rlimits[0].soft == UINT64_MAX);
  ck_assert (s->process->rlimits[0].hard == UINT64_MAX);
  ck_assert (s->process->rlimits[1].soft == 9223372036854775808ull);
  ck_assert (s->process->rlimits[1].hard == 0);

  static const char *bad[] = { "-1", "-0", "1.0", "0.5", "1E2", "true", "'5'", "null" };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (bad); i++)
    {
      _cleanup_free_ char *proc
          = xasprintf (DEF_PROC ",'rlimits':[{'type':'RLIMIT_AS','soft':%s,'hard':1}]", bad[i]);
      _cleanup_free_ char *d = cfg (proc, NULL, NULL, NULL);
      _cleanup_free_ char *m = parse_msg (d);
      const char *want = strcmp (bad[i], "null") == 0
                             ? "config.json: process.rlimits[0].soft: required field is missing"
                             : "config.json: process.rlimits[0].soft: expected unsigned 64-bit "
                               "integer";
      ck_assert_msg (m && strcmp (m, want) == 0, "%s: got %s", bad[i], m ? m : "(success)");
    }
}
END_TEST

START_TEST (test_oom_and_time_ranges)
{
  _cleanup_free_ char *ok
      = cfg (DEF_PROC ",'oomScoreAdj':1000", NULL,
             "'timeOffsets':{'monotonic':{'secs':-9223372036854775808}}", NULL);
  _cleanup_free_ char *m = parse_msg (ok);
  ck_assert_msg (m == NULL, "%s", m);
  _cleanup_free_ char *bad = cfg (DEF_PROC ",'oomScoreAdj':-1001", NULL, NULL, NULL);
  _cleanup_free_ char *m2 = parse_msg (bad);
  ck_assert_str_eq (m2, "config.json: process.oomScoreAdj: must be between -1000 and 1000, got "
                        "-1001");
  _cleanup_free_ char *bad2
      = cfg (NULL, NULL, "'timeOffsets':{'monotonic':{'secs':9223372036854775808}}", NULL);
  _cleanup_free_ char *m3 = parse_msg (bad2);
  ck_assert_str_eq (m3, "config.json: linux.timeOffsets.monotonic.secs: expected 64-bit integer");
}
END_TEST

/* ---- kist_spec_load ---- */

static char tmpdir[64];

static void
tmp_setup (void)
{
  strcpy (tmpdir, "/tmp/kist-test-spec-XXXXXX");
  if (mkdtemp (tmpdir) == NULL)
    {
      perror ("mkdtemp");
      abort ();
    }
}

static void
tmp_teardown (void)
{
  int dfd = open (tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0)
    {
      unlinkat (dfd, "config.json", 0);
      unlinkat (dfd, "config.json", AT_REMOVEDIR);
      close (dfd);
    }
  rmdir (tmpdir);
}

static void
write_config (int dfd, const char *data, size_t len)
{
  int fd = openat (dfd, "config.json", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ck_assert_int_ge (fd, 0);
  ck_assert_int_eq (kist_write_all (fd, data, len), 0);
  close (fd);
}

START_TEST (test_load)
{
  _cleanup_close_ int dfd = open (tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ck_assert_int_ge (dfd, 0);
  struct kist_spec *s = NULL;
  struct kist_error *err = NULL;

  /* Missing. */
  ck_assert_int_eq (kist_spec_load (dfd, &s, &err), -ENOENT);
  ck_assert_str_eq (err->msg,
                    "config.json not found in the bundle directory (create one with `kist spec`)");
  ck_assert_int_eq (err->errnum, ENOENT);
  kist_error_free (err);
  err = NULL;

  /* Valid. */
  _cleanup_free_ char *json = kist_spec_default_json (false);
  write_config (dfd, json, strlen (json));
  ck_assert_int_eq (kist_spec_load (dfd, &s, &err), 0);
  ck_assert_str_eq (s->root_path, "rootfs");
  kist_spec_free (s);
  s = NULL;

  /* Errors from the parser keep their config.json prefix. */
  write_config (dfd, "{\"ociVersion\":\"1.0\"}", 20);
  ck_assert_int_lt (kist_spec_load (dfd, &s, &err), 0);
  ck_assert_str_eq (err->msg, "config.json: root: required field is missing");
  kist_error_free (err);
  err = NULL;

  /* Exactly the limit is accepted by the size check (then fails to parse);
   * one byte more is refused before reading. */
  int fd = openat (dfd, "config.json", O_WRONLY | O_TRUNC | O_CLOEXEC);
  ck_assert_int_ge (fd, 0);
  ck_assert_int_eq (ftruncate (fd, KIST_SPEC_MAX_SIZE), 0);
  ck_assert_int_lt (kist_spec_load (dfd, &s, &err), 0);
  ck_assert_msg (strstr (err->msg, "malformed JSON") != NULL, "%s", err->msg);
  kist_error_free (err);
  err = NULL;
  ck_assert_int_eq (ftruncate (fd, KIST_SPEC_MAX_SIZE + 1), 0);
  close (fd);
  ck_assert_int_eq (kist_spec_load (dfd, &s, &err), -EFBIG);
  ck_assert_str_eq (err->msg, "config.json is 4194305 bytes, larger than the 4 MiB kist accepts");
  kist_error_free (err);
  err = NULL;

  /* Not a regular file. */
  ck_assert_int_eq (unlinkat (dfd, "config.json", 0), 0);
  ck_assert_int_eq (mkdirat (dfd, "config.json", 0755), 0);
  ck_assert_int_lt (kist_spec_load (dfd, &s, &err), 0);
  ck_assert_str_eq (err->msg,
                    "config.json in the bundle directory is not a regular file (it is a "
                    "directory)");
  kist_error_free (err);
  err = NULL;
  ck_assert_int_eq (unlinkat (dfd, "config.json", AT_REMOVEDIR), 0);

  /* A FIFO does not block. */
  ck_assert_int_eq (mkfifoat (dfd, "config.json", 0644), 0);
  ck_assert_int_lt (kist_spec_load (dfd, &s, &err), 0);
  ck_assert_msg (strstr (err->msg, "it is a FIFO") != NULL, "%s", err->msg);
  kist_error_free (err);
  ck_assert_ptr_null (s);
}
END_TEST

/* ---- default config ---- */

static void
check_default (bool rootless)
{
  _cleanup_free_ char *json = kist_spec_default_json (rootless);
  ck_assert_ptr_nonnull (json);
  ck_assert (json[strlen (json) - 1] == '\n');
  ck_assert_msg (strstr (json, "\n  \"ociVersion\": \"1.2.0\"") != NULL, "not pretty:\n%s", json);
  _cleanup_spec_ struct kist_spec *s = NULL;
  struct kist_error *err = NULL;
  int r = kist_spec_parse (json, strlen (json), &s, &err);
  if (r < 0)
    ck_abort_msg ("default (rootless=%d) does not parse: %s\n%s", rootless, err->msg, json);
  ck_assert_str_eq (s->oci_version, "1.2.0");
  ck_assert_str_eq (s->root_path, "rootfs");
  ck_assert (s->root_readonly);
  ck_assert_str_eq (s->hostname, "kist");
  struct kist_process *p = s->process;
  ck_assert_str_eq (p->args[0], "sh");
  ck_assert_ptr_null (p->args[1]);
  ck_assert (!p->terminal);
  ck_assert_str_eq (p->env[0], "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
  ck_assert_str_eq (p->env[1], "TERM=xterm");
  ck_assert_str_eq (p->cwd, "/");
  ck_assert_uint_eq (p->user.uid, 0);
  ck_assert_uint_eq (p->user.gid, 0);
  ck_assert_uint_eq (kist_strv_len (p->capabilities->bounding), 3);
  ck_assert_str_eq (p->capabilities->effective[2], "CAP_NET_BIND_SERVICE");
  ck_assert_str_eq (p->capabilities->permitted[0], "CAP_AUDIT_WRITE");
  ck_assert_ptr_null (p->capabilities->inheritable);
  ck_assert_ptr_null (p->capabilities->ambient);
  ck_assert_uint_eq (p->n_rlimits, 1);
  ck_assert_str_eq (p->rlimits[0].type, "RLIMIT_NOFILE");
  ck_assert_uint_eq (p->rlimits[0].soft, 1024);
  ck_assert_uint_eq (p->rlimits[0].hard, 1024);
  ck_assert (p->no_new_privileges);

  static const char *dests[] = { "/proc", "/dev", "/dev/pts", "/dev/shm", "/dev/mqueue", "/sys",
                                 "/sys/fs/cgroup" };
  static const char *types[] = { "proc", "tmpfs", "devpts", "tmpfs", "mqueue", "sysfs", "cgroup2" };
  ck_assert_uint_eq (s->n_mounts, 7);
  for (size_t i = 0; i < 7; i++)
    {
      ck_assert_str_eq (s->mounts[i].destination, dests[i]);
      ck_assert_str_eq (s->mounts[i].type, types[i]);
    }
  ck_assert_ptr_null (s->mounts[0].options);
  ck_assert_str_eq (s->mounts[1].options[3], "size=65536k");
  ck_assert_str_eq (s->mounts[5].options[3], "ro");
  ck_assert_str_eq (s->mounts[6].options[4], "ro");
  bool gid5 = false;
  for (char **o = s->mounts[2].options; *o; o++)
    gid5 = gid5 || strcmp (*o, "gid=5") == 0;
  ck_assert (gid5 == !rootless);

  struct kist_linux *l = s->linux_;
  ck_assert (l->ns[KIST_NS_PID].present && l->ns[KIST_NS_NET].present
             && l->ns[KIST_NS_IPC].present && l->ns[KIST_NS_UTS].present
             && l->ns[KIST_NS_MOUNT].present && l->ns[KIST_NS_CGROUP].present);
  ck_assert (!l->ns[KIST_NS_TIME].present);
  ck_assert (l->ns[KIST_NS_USER].present == rootless);
  if (rootless)
    {
      ck_assert_uint_eq (l->n_uid_mappings, 1);
      ck_assert_uint_eq (l->uid_mappings[0].container_id, 0);
      ck_assert_uint_eq (l->uid_mappings[0].host_id, geteuid ());
      ck_assert_uint_eq (l->uid_mappings[0].size, 1);
      ck_assert_uint_eq (l->n_gid_mappings, 1);
      ck_assert_uint_eq (l->gid_mappings[0].host_id, getegid ());
    }
  else
    {
      ck_assert_uint_eq (l->n_uid_mappings, 0);
      ck_assert_uint_eq (l->n_gid_mappings, 0);
    }
  ck_assert_uint_eq (kist_strv_len (l->masked_paths), 10);
  ck_assert_str_eq (l->masked_paths[9], "/proc/scsi");
  ck_assert_uint_eq (kist_strv_len (l->readonly_paths), 5);
  ck_assert_str_eq (l->readonly_paths[4], "/proc/sysrq-trigger");
  ck_assert_ptr_null (l->resources);
  ck_assert_ptr_null (s->hooks);
}

START_TEST (test_default_json)
{
  check_default (false);
}
END_TEST

START_TEST (test_default_json_rootless)
{
  check_default (true);
}
END_TEST

/* ---- kist_process_parse ---- */

START_TEST (test_process_parse)
{
  _cleanup_free_ char *json
      = q ("{'terminal':false,'user':{'uid':1,'gid':2,'additionalGids':[]},'args':['ls','-l'],"
           "'env':['A=b'],'cwd':'/tmp','rlimits':[{'type':'RLIMIT_NPROC','soft':1,'hard':2}],"
           "'capabilities':{'bounding':['CAP_CHOWN']},'noNewPrivileges':true,"
           "'unknownKey':1}");
  struct kist_process *p = NULL;
  struct kist_error *err = NULL;
  int r = kist_process_parse (json, strlen (json), &p, &err);
  if (r < 0)
    ck_abort_msg ("parse failed: %s", err->msg);
  ck_assert_str_eq (p->args[1], "-l");
  ck_assert_str_eq (p->cwd, "/tmp");
  ck_assert_uint_eq (p->user.uid, 1);
  ck_assert_uint_eq (p->user.gid, 2);
  ck_assert (p->user.has_additional_gids);
  ck_assert_uint_eq (p->user.n_additional_gids, 0);
  ck_assert_str_eq (p->rlimits[0].type, "RLIMIT_NPROC");
  ck_assert_str_eq (p->capabilities->bounding[0], "CAP_CHOWN");
  ck_assert (p->no_new_privileges);
  kist_process_free (p);
  p = NULL;

  static const struct
  {
    const char *doc, *msg;
  } bad[] = {
    { "{'args':['sh',{}],'cwd':'/'}", "process.args[1]: expected string" },
    { "{'args':['sh']}", "process.cwd: required field is missing" },
    { "{'args':['sh'],'cwd':'/','user':{'uid':0,'gid':0,'additionalGids':[-3]}}",
      "process.user.additionalGids[0]: expected unsigned 32-bit integer" },
    { "[]", "process: expected object" },
    { "{'args':", "process: malformed JSON: parse error: premature EOF near `{\"args\":`" },
  };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (bad); i++)
    {
      _cleanup_free_ char *d = q (bad[i].doc);
      ck_assert_int_lt (kist_process_parse (d, strlen (d), &p, &err), 0);
      ck_assert_ptr_null (p);
      ck_assert_msg (strcmp (err->msg, bad[i].msg) == 0, "case %zu: got %s", i, err->msg);
      kist_error_free (err);
      err = NULL;
    }
}
END_TEST

/* ---- ioPriority, scheduler, execCPUAffinity, personality, memoryPolicy ---- */

START_TEST (test_procattrs)
{
  _cleanup_free_ char *doc = cfg (
      DEF_PROC ",'ioPriority':{'class':'IOPRIO_CLASS_IDLE','priority':7},"
               "'scheduler':{'policy':'SCHED_DEADLINE','nice':-3,'priority':0,"
               "'flags':['SCHED_FLAG_RESET_ON_FORK','SCHED_FLAG_DL_OVERRUN'],"
               "'runtime':10000,'deadline':20000,'period':30000},"
               "'execCPUAffinity':{'initial':'0-3,7','final':''}",
      NULL,
      "'personality':{'domain':'LINUX32','flags':[]},"
      "'memoryPolicy':{'mode':'MPOL_INTERLEAVE','nodes':'0-1','flags':['MPOL_F_STATIC_NODES']}",
      NULL);
  _cleanup_free_ char *json = q (doc);
  struct kist_spec *s = NULL;
  struct kist_error *err = NULL;
  if (kist_spec_parse (json, strlen (json), &s, &err) < 0)
    ck_abort_msg ("parse failed: %s", err->msg);
  const struct kist_process *p = s->process;
  ck_assert (p->has_io_priority);
  ck_assert_int_eq (p->io_priority.klass, 3);
  ck_assert_int_eq (p->io_priority.priority, 7);
  ck_assert (p->has_scheduler);
  ck_assert_int_eq (p->scheduler.policy, 6);
  ck_assert_int_eq (p->scheduler.nice, -3);
  ck_assert_uint_eq (p->scheduler.flags, 0x05);
  ck_assert_uint_eq (p->scheduler.runtime, 10000);
  ck_assert_uint_eq (p->scheduler.deadline, 20000);
  ck_assert_uint_eq (p->scheduler.period, 30000);
  ck_assert (p->has_exec_cpu_affinity);
  ck_assert_str_eq (p->exec_cpu_affinity.initial, "0-3,7");
  ck_assert_ptr_null (p->exec_cpu_affinity.final); /* "" means omitted */
  ck_assert (s->linux_->has_personality);
  ck_assert_uint_eq (s->linux_->personality.domain, 8);
  ck_assert (s->linux_->has_memory_policy);
  ck_assert_int_eq (s->linux_->memory_policy.mode, 3);
  ck_assert_uint_eq (s->linux_->memory_policy.flags, 1u << 15);
  ck_assert_str_eq (s->linux_->memory_policy.nodes, "0-1");
  kist_spec_free (s);
  s = NULL;

  /* Absent: nothing requested; MPOL_LOCAL without nodes is fine. */
  _cleanup_free_ char *doc2 = cfg (NULL, NULL, "'memoryPolicy':{'mode':'MPOL_LOCAL'}", NULL);
  _cleanup_free_ char *json2 = q (doc2);
  if (kist_spec_parse (json2, strlen (json2), &s, &err) < 0)
    ck_abort_msg ("parse failed: %s", err->msg);
  ck_assert (!s->process->has_io_priority && !s->process->has_scheduler);
  ck_assert (!s->process->has_exec_cpu_affinity && !s->linux_->has_personality);
  ck_assert (s->linux_->has_memory_policy);
  ck_assert_int_eq (s->linux_->memory_policy.mode, 4);
  ck_assert_ptr_null (s->linux_->memory_policy.nodes);
  kist_spec_free (s);

  /* The names back. */
  ck_assert_str_eq (kist_sched_policy_name (2), "SCHED_RR");
  ck_assert_ptr_null (kist_sched_policy_name (7));
  ck_assert_str_eq (kist_ioprio_class_name (2), "IOPRIO_CLASS_BE");
  ck_assert_str_eq (kist_mempolicy_mode_name (6), "MPOL_WEIGHTED_INTERLEAVE");

  /* kist exec --process FILE carries them too. */
  _cleanup_free_ char *pj = q ("{'args':['sh'],'cwd':'/','scheduler':{'policy':'SCHED_BATCH'},"
                               "'execCPUAffinity':{'final':'1'}}");
  struct kist_process *pp = NULL;
  if (kist_process_parse (pj, strlen (pj), &pp, &err) < 0)
    ck_abort_msg ("parse failed: %s", err->msg);
  ck_assert (pp->has_scheduler);
  ck_assert_int_eq (pp->scheduler.policy, 3);
  ck_assert_str_eq (pp->exec_cpu_affinity.final, "1");
  kist_process_free (pp);
}
END_TEST

START_TEST (test_idlist)
{
  unsigned long bits[4];
  const char *bad = NULL;
  ck_assert_int_eq (kist_idlist_parse ("0-3,7,64,100-101", bits, 256, &bad), 0);
  ck_assert_uint_eq (bits[0], 0x8fUL);
  ck_assert_uint_eq (bits[1], 0x1UL | (0x3UL << 36));
  _cleanup_free_ char *f = kist_idlist_format (bits, 256);
  ck_assert_str_eq (f, "0-3,7,64,100-101");
  ck_assert_int_eq (kist_idlist_parse ("", bits, 256, &bad), 0);
  _cleanup_free_ char *e = kist_idlist_format (bits, 256);
  ck_assert_str_eq (e, "");
  ck_assert_int_eq (kist_idlist_parse ("255", bits, 256, &bad), 0);
  _cleanup_free_ char *l = kist_idlist_format (bits, 256);
  ck_assert_str_eq (l, "255");
  ck_assert_int_eq (kist_idlist_parse ("256", bits, 256, &bad), -ERANGE);
  ck_assert_int_eq (kist_idlist_parse ("0-256", bits, 256, &bad), -ERANGE);
  ck_assert_int_eq (kist_idlist_parse ("99999999999999999999999", bits, 256, &bad), -ERANGE);
  static const char *const malformed[] = { ",", "1,", ",1", "1,,2", "a", "1-", "-1", "3-1",
                                           "1 ", " 1", "1-2-3", "+1" };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (malformed); i++)
    ck_assert_msg (kist_idlist_parse (malformed[i], bits, 256, &bad) == -EINVAL, "\"%s\"",
                   malformed[i]);
}
END_TEST

START_TEST (test_ns_helpers)
{
  static const char *names[] = { "user", "mount", "pid", "net", "uts", "ipc", "cgroup", "time" };
  static const unsigned long flags[]
      = { CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWUTS, CLONE_NEWIPC,
          CLONE_NEWCGROUP, 0x80 };
  for (int t = 0; t < KIST_NS_COUNT; t++)
    {
      ck_assert_str_eq (kist_ns_name ((enum kist_ns_type) t), names[t]);
      ck_assert_uint_eq (kist_ns_clone_flag ((enum kist_ns_type) t), flags[t]);
    }
  ck_assert_str_eq (kist_ns_name (KIST_NS_COUNT), "unknown");
  ck_assert_uint_eq (kist_ns_clone_flag (KIST_NS_COUNT), 0);
  kist_spec_free (NULL);
  kist_process_free (NULL);
  ck_assert_ptr_null (kist_spec_annotation (NULL, "x"));
}
END_TEST

/* spec_jp_index formats the index by hand (no sprintf): check the digits
 * and that pop restores the path. */
START_TEST (test_jp_index)
{
  struct jpath p = { .doc = "" };
  spec_jp_key (&p, "a");
  size_t m = spec_jp_index (&p, 0);
  ck_assert_str_eq (p.buf, "a[0]");
  spec_jp_index (&p, 9);
  spec_jp_index (&p, 10);
  spec_jp_index (&p, 1234567);
  ck_assert_str_eq (p.buf, "a[0][9][10][1234567]");
  spec_jp_pop (&p, m);
  spec_jp_index (&p, (size_t) -1);
  char want[64];
  snprintf (want, sizeof want, "a[%zu]", (size_t) -1);
  ck_assert_str_eq (p.buf, want);
  ck_assert_uint_eq (p.len, strlen (want));
  free (p.buf);
}
END_TEST

static Suite *
spec_suite (void)
{
  Suite *s = suite_create ("spec");
  TCase *tc = tcase_create ("parse");
  tcase_add_test (tc, test_full_config);
  tcase_add_test (tc, test_jp_index);
  tcase_add_test (tc, test_minimal_config);
  tcase_add_test (tc, test_nulls_and_defaults);
  tcase_add_test (tc, test_malformed);
  tcase_add_loop_test (tc, test_bad_config, 0, (int) KIST_ARRAY_SIZE (bad_cases));
  tcase_add_test (tc, test_net_devices);
  tcase_add_test (tc, test_top_level_required);
  tcase_add_test (tc, test_rlimit_range);
  tcase_add_test (tc, test_oom_and_time_ranges);
  tcase_add_test (tc, test_process_parse);
  tcase_add_test (tc, test_ns_helpers);
  tcase_add_test (tc, test_procattrs);
  tcase_add_test (tc, test_idlist);
  suite_add_tcase (s, tc);

  TCase *tl = tcase_create ("load");
  tcase_add_unchecked_fixture (tl, tmp_setup, tmp_teardown);
  tcase_add_test (tl, test_load);
  suite_add_tcase (s, tl);

  TCase *td = tcase_create ("default");
  tcase_add_test (td, test_default_json);
  tcase_add_test (td, test_default_json_rootless);
  suite_add_tcase (s, td);
  return s;
}

int
main (void)
{
  return kist_unit_run (spec_suite ());
}
