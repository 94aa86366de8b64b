/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for runtime/sync.c: the parent <-> init packets, and what the
 * receiving side does with oversized, truncated, malformed or unexpected
 * ones (CVE-2021-43784 class: no overflow, no huge allocation, no fd leak). */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sync.h"
#include "util.h"
#include "unit.h"

/* ---- helpers ---- */

static int sp[2] = { -1, -1 };

static void
pair_setup (void)
{
  ck_assert_int_eq (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
  /* Room for a packet well over KIST_SYNC_MAX. */
  int big = 4 * KIST_SYNC_MAX;
  setsockopt (sp[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
  setsockopt (sp[1], SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
}

static void
pair_teardown (void)
{
  for (int i = 0; i < 2; i++)
    if (sp[i] >= 0)
      {
        close (sp[i]);
        sp[i] = -1;
      }
}

/* A raw packet of len bytes, as a broken or hostile peer would send it. */
static void
raw_send (const void *buf, size_t len)
{
  ck_assert_int_eq (send (sp[0], buf, len, MSG_NOSIGNAL), (ssize_t) len);
}

/* A raw packet of n bytes: type, then 'x's. */
static void
raw_send_filled (char type, size_t n)
{
  _cleanup_free_ char *buf = xmalloc (n);
  memset (buf, 'x', n);
  buf[0] = type;
  raw_send (buf, n);
}

static int
count_fds (void)
{
  DIR *d = opendir ("/proc/self/fd");
  ck_assert_ptr_nonnull (d);
  int n = 0;
  struct dirent *de;
  while ((de = readdir (d)))
    if (de->d_name[0] != '.')
      n++;
  closedir (d);
  return n;
}

/* Receive one packet with kist_sync_recv; returns its result. */
static int
recv_one (char *type, char **payload, size_t *len)
{
  *payload = NULL;
  return kist_sync_recv (sp[1], type, payload, len);
}

/* Decode the ERROR payload s (strlen) and return the error (caller frees). */
static struct kist_error *
decode_err (const char *s, size_t len, int *ret)
{
  struct kist_error *e = NULL;
  *ret = kist_sync_decode_error (s, len, &e);
  ck_assert_ptr_nonnull (e);
  return e;
}

/* ---- round trips ---- */

START_TEST (test_roundtrip)
{
  char type = 0;
  _cleanup_free_ char *p = NULL;
  size_t len = 99;

  ck_assert_int_eq (kist_sync_send (sp[0], KIST_SYNC_GO, NULL, 0), 0);
  ck_assert_int_eq (recv_one (&type, &p, &len), 0);
  ck_assert_int_eq (type, KIST_SYNC_GO);
  ck_assert_uint_eq (len, 0);
  ck_assert_str_eq (p, "");
  free (p);

  const char layer[] = "seccomp\0" "0\0" "1\0" "0\0" "0\0" "0";
  ck_assert_int_eq (kist_sync_send (sp[0], KIST_SYNC_LAYER, layer, sizeof layer), 0);
  ck_assert_int_eq (recv_one (&type, &p, &len), 0);
  ck_assert_int_eq (type, KIST_SYNC_LAYER);
  ck_assert_uint_eq (len, sizeof layer);
  ck_assert_mem_eq (p, layer, sizeof layer);
  free (p);

  ck_assert_int_eq (kist_sync_send (sp[0], KIST_SYNC_PID, "4242", 4), 0);
  ck_assert_int_eq (recv_one (&type, &p, &len), 0);
  ck_assert_int_eq (type, KIST_SYNC_PID);
  ck_assert_str_eq (p, "4242");
  free (p);

  /* The largest packet there is still goes through whole. */
  size_t max = KIST_SYNC_MAX - 1;
  _cleanup_free_ char *big = xmalloc (max);
  memset (big, 'x', max);
  ck_assert_int_eq (kist_sync_send (sp[0], KIST_SYNC_ERROR, big, max), 0);
  ck_assert_int_eq (recv_one (&type, &p, &len), 0);
  ck_assert_int_eq (type, KIST_SYNC_ERROR);
  ck_assert_uint_eq (len, max);
  ck_assert_mem_eq (p, big, max);

  /* EOF: the peer is gone. */
  close (sp[0]);
  sp[0] = -1;
  free (p);
  p = NULL;
  ck_assert_int_eq (recv_one (&type, &p, &len), -ECONNRESET);
  ck_assert_ptr_null (p);
}
END_TEST

/* ---- the sending side: never a cut or wrapped-around packet ---- */

START_TEST (test_send_oversized)
{
  _cleanup_free_ char *big = xmalloc (KIST_SYNC_MAX + 1);
  memset (big, 'x', KIST_SYNC_MAX + 1);
  /* 1 + len > KIST_SYNC_MAX: refused, nothing sent (not cut short). */
  ck_assert_int_eq (kist_sync_send (sp[0], KIST_SYNC_ERROR, big, KIST_SYNC_MAX), -EMSGSIZE);
  ck_assert_int_eq (kist_sync_send (sp[0], KIST_SYNC_ERROR, big, KIST_SYNC_MAX + 1), -EMSGSIZE);
  /* len + 1 wraps around to 0: still refused, no huge copy. */
  ck_assert_int_eq (kist_sync_send (sp[0], KIST_SYNC_LAYER, big, SIZE_MAX), -EMSGSIZE);
  ck_assert_int_eq (kist_sync_send (sp[0], KIST_SYNC_LAYER, big, SIZE_MAX - 1), -EMSGSIZE);
  int devnull = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  ck_assert_int_ge (devnull, 0);
  ck_assert_int_eq (kist_sync_send_fd (sp[0], KIST_SYNC_SECCOMP_FD, big, SIZE_MAX, devnull),
                    -EMSGSIZE);
  ck_assert_int_eq (kist_sync_send_fd (sp[0], KIST_SYNC_SECCOMP_FD, big, KIST_SYNC_MAX, devnull),
                    -EMSGSIZE);
  close (devnull);

  /* Nothing was sent: the next packet is the first one the peer sees. */
  ck_assert_int_eq (kist_sync_send (sp[0], KIST_SYNC_READY, NULL, 0), 0);
  char type = 0;
  _cleanup_free_ char *p = NULL;
  size_t len = 0;
  ck_assert_int_eq (recv_one (&type, &p, &len), 0);
  ck_assert_int_eq (type, KIST_SYNC_READY);
  ck_assert_uint_eq (len, 0);
}
END_TEST

START_TEST (test_send_error_long)
{
  /* A message longer than a packet: cut to fit, never in a UTF-8 sequence,
   * and the status and errno still decode. */
  size_t n = 3 * KIST_SYNC_MAX;
  char *m = xmalloc (n + 1);
  for (size_t i = 0; i + 1 < n; i += 2)
    memcpy (m + i, "\xc3\xa9", 2); /* é */
  m[n] = '\0';
  struct kist_error e = { .errnum = ENOENT, .status = 0, .msg = m };
  ck_assert_int_eq (kist_sync_send_error (sp[0], &e), 0);
  free (m);

  char type = 0;
  _cleanup_free_ char *p = NULL;
  size_t len = 0;
  ck_assert_int_eq (recv_one (&type, &p, &len), 0);
  ck_assert_int_eq (type, KIST_SYNC_ERROR);
  ck_assert_uint_le (len, KIST_SYNC_MAX - 1);
  int ret;
  struct kist_error *got = decode_err (p, len, &ret);
  ck_assert_int_eq (got->errnum, ENOENT);
  size_t ml = strlen (got->msg);
  ck_assert_uint_gt (ml, KIST_SYNC_MAX / 2);
  ck_assert_uint_eq (ml % 2, 0); /* whole characters only */
  ck_assert_int_eq ((unsigned char) got->msg[ml - 1], 0xa9);
  kist_error_free (got);
}
END_TEST

/* ---- the receiving side ---- */

START_TEST (test_recv_oversized)
{
  /* A packet bigger than KIST_SYNC_MAX: the kernel cuts it; kist must see
   * that (MSG_TRUNC) and refuse it, not take the first 64 KiB as a message. */
  raw_send_filled (KIST_SYNC_ERROR, KIST_SYNC_MAX + 100);
  /* Exactly one byte too many. */
  raw_send_filled (KIST_SYNC_LAYER, KIST_SYNC_MAX + 1);
  ck_assert_int_eq (kist_sync_send (sp[0], KIST_SYNC_READY, NULL, 0), 0);

  char type = 0;
  char *p = NULL;
  size_t len = 0;
  ck_assert_int_eq (recv_one (&type, &p, &len), -EMSGSIZE);
  ck_assert_ptr_null (p);
  ck_assert_int_eq (recv_one (&type, &p, &len), -EMSGSIZE);
  ck_assert_ptr_null (p);
  /* The bad packets were consumed whole: the stream is still in step. */
  ck_assert_int_eq (recv_one (&type, &p, &len), 0);
  ck_assert_int_eq (type, KIST_SYNC_READY);
  free (p);
}
END_TEST

START_TEST (test_recv_oversized_fd)
{
  raw_send_filled (KIST_SYNC_LAYER, KIST_SYNC_MAX + 1);
  int before = count_fds ();
  char type = 0;
  char *p = NULL;
  size_t len = 0;
  int passed = 7;
  ck_assert_int_eq (kist_sync_recv_fd (sp[1], &type, &p, &len, &passed), -EMSGSIZE);
  ck_assert_ptr_null (p);
  ck_assert_int_eq (passed, -1);
  ck_assert_int_eq (count_fds (), before);
}
END_TEST

START_TEST (test_recv_unexpected)
{
  /* Unknown types, and payloads on types that have none. */
  static const struct
  {
    const char *pkt;
    size_t len;
  } bad[] = {
    { "Z", 1 },           { "Zhello", 6 },       { "\0", 1 },          { "\xff", 1 },
    { "g", 1 },           { "Gjunk", 5 },        { "Rjunk", 5 },       { "Sx", 2 },
    { "L", 1 },            { "E", 1 },           { "Ea\0b", 4 },
    { "P", 1 },           { "P12x", 4 },         { "P-1", 3 },         { "P 12", 4 },
    { "P12345678901", 12 }, { "P99999999999999999999", 21 }, { "P1\0", 3 },
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    raw_send (bad[i].pkt, bad[i].len);
  ck_assert_int_eq (kist_sync_send (sp[0], KIST_SYNC_GO, NULL, 0), 0);
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      char type = 0;
      char *p = NULL;
      size_t len = 0;
      int ret = recv_one (&type, &p, &len);
      ck_assert_msg (ret == -EPROTO, "packet %zu (`%.*s`): got %d, not -EPROTO", i,
                     (int) bad[i].len, bad[i].pkt, ret);
      ck_assert_ptr_null (p);
    }
  char type = 0;
  _cleanup_free_ char *p = NULL;
  ck_assert_int_eq (recv_one (&type, &p, NULL), 0);
  ck_assert_int_eq (type, KIST_SYNC_GO);
}
END_TEST

START_TEST (test_recv_fds)
{
  int devnull = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  ck_assert_int_ge (devnull, 0);
  int before = count_fds ();

  /* One fd: it comes, close-on-exec. */
  ck_assert_int_eq (kist_sync_send_fd (sp[0], KIST_SYNC_SECCOMP_FD, NULL, 0, devnull), 0);
  char type = 0;
  char *p = NULL;
  size_t len = 0;
  int passed = -1;
  ck_assert_int_eq (kist_sync_recv_fd (sp[1], &type, &p, &len, &passed), 0);
  ck_assert_int_eq (type, KIST_SYNC_SECCOMP_FD);
  ck_assert_int_ge (passed, 0);
  ck_assert_int_ne (fcntl (passed, F_GETFD) & FD_CLOEXEC, 0);
  close (passed);
  free (p);

  /* Many fds on a packet: more than the control buffer holds (MSG_CTRUNC)
   * or a few extra: none may stay open in the receiver. */
  for (int many = 3; many <= 64; many += 61)
    {
      int fds[64];
      for (int i = 0; i < many; i++)
        fds[i] = devnull;
      size_t clen = CMSG_SPACE (sizeof (int) * (size_t) many);
      char *ctl = calloc (1, clen);
      char t = KIST_SYNC_SECCOMP_FD;
      struct iovec iov = { .iov_base = &t, .iov_len = 1 };
      struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
                            .msg_controllen = clen };
      struct cmsghdr *c = CMSG_FIRSTHDR (&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN (sizeof (int) * (size_t) many);
      memcpy (CMSG_DATA (c), fds, sizeof (int) * (size_t) many);
      ck_assert_int_eq (sendmsg (sp[0], &msg, MSG_NOSIGNAL), 1);
      free (ctl);

      p = NULL;
      passed = -1;
      int ret = kist_sync_recv_fd (sp[1], &type, &p, &len, &passed);
      if (many > 4)
        {
          ck_assert_int_eq (ret, -EPROTO);
          ck_assert_int_eq (passed, -1);
        }
      else
        {
          ck_assert_int_eq (ret, 0);
          ck_assert_int_ge (passed, 0);
          close (passed);
        }
      free (p);
      ck_assert_int_eq (count_fds (), before);
    }

  /* An fd on a malformed packet is closed too. */
  char bad = 'Z';
  ck_assert_int_eq (send (sp[0], &bad, 1, 0), 1); /* (no fd: plain) */
  p = NULL;
  passed = -1;
  ck_assert_int_eq (kist_sync_recv_fd (sp[1], &type, &p, &len, &passed), -EPROTO);
  ck_assert_int_eq (passed, -1);
  ck_assert_int_eq (kist_sync_send_fd (sp[0], 'Z', NULL, 0, devnull), 0);
  ck_assert_int_eq (kist_sync_recv_fd (sp[1], &type, &p, &len, &passed), -EPROTO);
  ck_assert_int_eq (passed, -1);
  ck_assert_ptr_null (p);
  ck_assert_int_eq (count_fds (), before);
  close (devnull);
}
END_TEST

/* ---- the decoder alone ---- */

START_TEST (test_decode)
{
  char type = 0;
  char *p = NULL;
  size_t len = 0;
  /* Sizes: empty, over the maximum, cut by the kernel, a LAYER over the
   * encoded maximum. */
  ck_assert_int_eq (kist_sync_decode ("", 0, 0, &type, &p, &len), -EPROTO);
  ck_assert_int_eq (kist_sync_decode ("R", 1, MSG_TRUNC, &type, &p, &len), -EMSGSIZE);
  _cleanup_free_ char *big = xcalloc (1, KIST_SYNC_MAX + 2);
  big[0] = KIST_SYNC_ERROR;
  memset (big + 1, 'x', KIST_SYNC_MAX);
  ck_assert_int_eq (kist_sync_decode (big, KIST_SYNC_MAX + 1, 0, &type, &p, &len), -EMSGSIZE);
  ck_assert_int_eq (kist_sync_decode (big, SIZE_MAX, 0, &type, &p, &len), -EMSGSIZE);
  ck_assert_int_eq (kist_sync_decode (big, KIST_SYNC_MAX, 0, &type, &p, &len), 0);
  ck_assert_uint_eq (len, KIST_SYNC_MAX - 1);
  free (p);
  p = NULL;
  big[0] = KIST_SYNC_LAYER;
  ck_assert_int_eq (kist_sync_decode (big, KIST_LAYER_ENCODED_MAX + 2, 0, &type, &p, &len),
                    -EMSGSIZE);
  ck_assert_int_eq (kist_sync_decode (big, KIST_LAYER_ENCODED_MAX + 1, 0, &type, &p, &len), 0);
  ck_assert_uint_eq (len, KIST_LAYER_ENCODED_MAX);
  free (p);
  p = NULL;
  ck_assert_ptr_null (p);
  /* The payload is copied with a NUL after it; nothing past n is read. */
  char buf[8] = { 'P', '1', '2', '3', '4', '5', 'x', 'y' };
  ck_assert_int_eq (kist_sync_decode (buf, 4, 0, &type, &p, &len), 0);
  ck_assert_int_eq (type, KIST_SYNC_PID);
  ck_assert_str_eq (p, "123");
  ck_assert_uint_eq (len, 3);
  free (p);
}
END_TEST

/* ---- report entries ---- */

START_TEST (test_layers_long)
{
  /* An entry whose texts (partly from the image: paths, symlink targets)
   * are too long for a packet: sent with them cut, not dropped, and the
   * stream goes on. */
  struct kist_report *r = kist_report_new ("c1", "run", NULL);
  size_t n = 5 * KIST_SYNC_MAX;
  char *big = xmalloc (n + 1);
  memset (big, 'p', n);
  big[n] = '\0';
  struct kist_layer l = { .name = (char *) "masked_paths", .requested = (char *) "",
                          .applied = true, .detail = big };
  kist_report_add (r, &l);
  l = (struct kist_layer){ .name = (char *) "mounts", .requested = big, .applied = false,
                           .errnum = ENOENT, .reason = big, .detail = big };
  kist_report_add (r, &l);
  l = (struct kist_layer){ .name = (char *) "dev", .requested = (char *) "", .applied = true,
                           .detail = (char *) "short" };
  kist_report_add (r, &l);
  free (big);

  size_t sent = 0;
  ck_assert_int_eq (kist_sync_send_layers (sp[0], r, 0, &sent), 0);
  ck_assert_uint_eq (sent, 3);
  /* They arrive as BATCH packets (as many entries as fit in one), in
   * order; read until the three are in. */
  struct kist_report *got_r = kist_report_new ("c1", "run", NULL);
  int packets = 0;
  while (got_r->n_layers < 3)
    {
      char type = 0;
      _cleanup_free_ char *p = NULL;
      size_t len = 0;
      ck_assert_int_eq (recv_one (&type, &p, &len), 0);
      ck_assert_int_eq (type, KIST_SYNC_BATCH);
      struct kist_error *e = NULL;
      ck_assert_int_eq (kist_sync_add_batch (got_r, p, len, "test", &e), 0);
      ck_assert_ptr_null (e);
      packets++;
    }
  ck_assert_int_ge (packets, 1);
  ck_assert_int_le (packets, 3);
  ck_assert_uint_eq (got_r->n_layers, 3);
  for (int i = 0; i < 3; i++)
    {
      const struct kist_layer *got = &got_r->layers[i];
      ck_assert_str_eq (got->name, r->layers[i].name);
      ck_assert_int_eq (got->applied, r->layers[i].applied);
      ck_assert_int_eq (got->errnum, r->layers[i].errnum);
      if (i < 2)
        {
          ck_assert_uint_lt (strlen (got->detail), KIST_LAYER_ENCODED_MAX);
          ck_assert_uint_gt (strlen (got->detail), 1000);
          ck_assert_int_eq (strncmp (got->detail, "pppp", 4), 0);
          ck_assert_ptr_nonnull (strstr (got->detail, " bytes cut]"));
        }
      else
        ck_assert_str_eq (got->detail, "short");
      if (i == 1)
        {
          ck_assert_ptr_nonnull (strstr (got->reason, " bytes cut]"));
          ck_assert_ptr_nonnull (strstr (got->requested, " bytes cut]"));
        }
    }
  kist_report_free (got_r);
  kist_report_free (r);
}
END_TEST

/* ---- BATCH framing ---- */

static int
decode_batch (const char *payload, size_t plen)
{
  char buf[256];
  ck_assert_uint_lt (plen + 1, sizeof buf);
  buf[0] = KIST_SYNC_BATCH;
  memcpy (buf + 1, payload, plen);
  char type = 0;
  char *p = NULL;
  size_t len = 0;
  int ret = kist_sync_decode (buf, plen + 1, 0, &type, &p, &len);
  if (ret == 0)
    {
      ck_assert_int_eq (type, KIST_SYNC_BATCH);
      ck_assert_uint_eq (len, plen);
    }
  free (p);
  return ret;
}

START_TEST (test_batch_framing)
{
  /* A real entry, encoded as the child does, framed once and twice. */
  struct kist_layer l = { .name = (char *) "dev", .requested = (char *) "yes", .applied = true,
                          .detail = (char *) "6 nodes" };
  _cleanup_free_ char *enc = NULL;
  size_t elen = 0;
  ck_assert_int_eq (kist_layer_encode (&l, &enc, &elen), 0);
  char one[200], two[200];
  int n1 = snprintf (one, sizeof one, "1%c%zu%c", 0, elen, 0);
  memcpy (one + n1, enc, elen);
  size_t l1 = (size_t) n1 + elen;
  ck_assert_int_eq (decode_batch (one, l1), 0);
  struct kist_layer l_b = { .name = (char *) "hostname", .requested = (char *) "kist",
                            .applied = true, .detail = (char *) "read back" };
  _cleanup_free_ char *enc_b = NULL;
  size_t elen_b = 0;
  ck_assert_int_eq (kist_layer_encode (&l_b, &enc_b, &elen_b), 0);
  int n2 = snprintf (two, sizeof two, "2%c%zu%c", 0, elen_b, 0);
  memcpy (two + n2, enc_b, elen_b);
  int n3 = snprintf (two + n2 + elen_b, sizeof two - n2 - elen_b, "%zu%c", elen, 0);
  memcpy (two + n2 + elen_b + n3, enc, elen);
  size_t l2 = (size_t) n2 + elen_b + (size_t) n3 + elen;
  ck_assert_int_eq (decode_batch (two, l2), 0);
  struct kist_report *r = kist_report_new ("c1", "run", NULL);
  struct kist_error *e = NULL;
  ck_assert_int_eq (kist_sync_add_batch (r, two, l2, "test", &e), 0);
  ck_assert_uint_eq (r->n_layers, 2);
  ck_assert_str_eq (r->layers[0].name, "hostname");
  ck_assert_str_eq (r->layers[1].name, "dev");
  ck_assert_str_eq (r->layers[1].detail, "6 nodes");
  kist_report_free (r);

  /* Empty batch: no payload, a count of 0, a count with no frames. */
  ck_assert_int_eq (decode_batch ("", 0), -EPROTO);
  ck_assert_int_eq (decode_batch ("0\0", 2), -EPROTO);
  ck_assert_int_eq (decode_batch ("1\0", 2), -EPROTO);
  /* Truncated: the last frame cut short, a length without its NUL. */
  ck_assert_int_eq (decode_batch (one, l1 - 1), -EPROTO);
  ck_assert_int_eq (decode_batch (two, l2 - 3), -EPROTO);
  ck_assert_int_eq (decode_batch ("1\0" "12", 4), -EPROTO);
  /* Bad counts: leading zero, not a number, more than the maximum, a count
   * of 2 with one frame, a count of 1 with bytes after its frame. */
  char bad[200];
  memcpy (bad, one, l1);
  bad[0] = '2';
  ck_assert_int_eq (decode_batch (bad, l1), -EPROTO);
  ck_assert_int_eq (decode_batch (two + 0, l2) , 0);
  two[0] = '1';
  ck_assert_int_eq (decode_batch (two, l2), -EPROTO);
  ck_assert_int_eq (decode_batch ("01\0" "1\0x", 6), -EPROTO);
  ck_assert_int_eq (decode_batch ("x\0" "1\0x", 5), -EPROTO);
  ck_assert_int_eq (decode_batch ("1025\0" "1\0x", 8), -EPROTO);
  ck_assert_int_eq (decode_batch ("99999999999999999999999\0" "1\0x", 27), -EPROTO);
  /* Oversized: a frame longer than any sender writes. */
  ck_assert_int_eq (decode_batch ("1\0" "32769\0x", 10), -EMSGSIZE);
  /* A well-framed batch whose entry is not an entry: refused by the
   * report, with the sender named. */
  r = kist_report_new ("c1", "run", NULL);
  e = NULL;
  ck_assert_int_lt (kist_sync_add_batch (r, "1\0" "1\0x", 5, "the init", &e), 0);
  ck_assert_ptr_nonnull (e);
  ck_assert_ptr_nonnull (strstr (e->msg, "the init"));
  kist_error_free (e);
  e = NULL;
  ck_assert_int_lt (kist_sync_add_batch (r, "2\0" "1\0x", 5, "the init", &e), 0);
  ck_assert_ptr_nonnull (e);
  ck_assert_ptr_nonnull (strstr (e->msg, "malformed batch"));
  kist_error_free (e);
  ck_assert_uint_eq (r->n_layers, 0);
  kist_report_free (r);
}
END_TEST

/* ---- error messages ---- */

START_TEST (test_decode_error)
{
  int ret;
  struct kist_error *e = decode_err ("125 2 no such thing", 19, &ret);
  ck_assert_int_eq (e->status, 125);
  ck_assert_int_eq (e->errnum, 2);
  ck_assert_str_eq (e->msg, "no such thing");
  kist_error_free (e);

  /* Only the len bytes count. */
  e = decode_err ("1 0 abcdef", 7, &ret);
  ck_assert_str_eq (e->msg, "abc");
  kist_error_free (e);

  static const char *const bad[] = {
    "",
    "x",
    "1",
    "1 ",
    "1 2",
    "1 2 ",
    "1  2 m",
    " 1 2 m",
    "a 2 m",
    "1 b m",
    "-1 2 m",
    "1 -2 m",
    "256 2 m",
    "1 4096 m",
    "99999999999999999999 2 m",
    "1 99999999999999999999 m",
    "2147483648 1 m",
    "1 4294967297 m",
    "1\t2 m",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      e = decode_err (bad[i], strlen (bad[i]), &ret);
      ck_assert_int_lt (ret, 0);
      ck_assert_msg (strstr (e->msg, "malformed error message") != NULL, "`%s` accepted as: %s",
                     bad[i], e->msg);
      kist_error_free (e);
    }

  /* A NUL inside, and a length over the maximum. */
  e = decode_err ("1 2 a\0b", 7, &ret);
  ck_assert_ptr_nonnull (strstr (e->msg, "malformed"));
  kist_error_free (e);
  _cleanup_free_ char *big = xmalloc (KIST_SYNC_MAX + 2);
  memset (big, 'x', KIST_SYNC_MAX + 1);
  memcpy (big, "1 2 ", 4);
  big[KIST_SYNC_MAX + 1] = '\0';
  e = decode_err (big, KIST_SYNC_MAX + 1, &ret);
  ck_assert_ptr_nonnull (strstr (e->msg, "malformed"));
  kist_error_free (e);
  e = decode_err (NULL, 0, &ret);
  ck_assert_ptr_nonnull (strstr (e->msg, "malformed"));
  kist_error_free (e);

  /* Round trip through the socket, errnum and status out of range clamped. */
  struct kist_error out = { .errnum = -5, .status = 0, .msg = (char *) "boom" };
  ck_assert_int_eq (kist_sync_send_error (sp[0], &out), 0);
  ck_assert_int_eq (kist_sync_send_error (sp[0], NULL), 0);
  char type = 0;
  _cleanup_free_ char *p1 = NULL, *p2 = NULL;
  size_t l1 = 0, l2 = 0;
  ck_assert_int_eq (recv_one (&type, &p1, &l1), 0);
  ck_assert_int_eq (recv_one (&type, &p2, &l2), 0);
  e = decode_err (p1, l1, &ret);
  ck_assert_int_eq (e->errnum, 0);
  ck_assert_str_eq (e->msg, "boom");
  kist_error_free (e);
  e = decode_err (p2, l2, &ret);
  ck_assert_int_eq (e->status, 125);
  ck_assert_str_eq (e->msg, "unknown error");
  kist_error_free (e);
}
END_TEST

static Suite *
sync_suite (void)
{
  Suite *s = suite_create ("sync");
  TCase *tc = tcase_create ("core");
  tcase_add_checked_fixture (tc, pair_setup, pair_teardown);
  tcase_add_test (tc, test_roundtrip);
  tcase_add_test (tc, test_send_oversized);
  tcase_add_test (tc, test_send_error_long);
  tcase_add_test (tc, test_recv_oversized);
  tcase_add_test (tc, test_recv_oversized_fd);
  tcase_add_test (tc, test_recv_unexpected);
  tcase_add_test (tc, test_recv_fds);
  tcase_add_test (tc, test_decode);
  tcase_add_test (tc, test_layers_long);
  tcase_add_test (tc, test_batch_framing);
  tcase_add_test (tc, test_decode_error);
  tcase_set_timeout (tc, 60);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  return kist_unit_run (sync_suite ());
}
