/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: the sync protocol as the parent sees it (sync.h).  The input
 * is one packet (type byte + payload), sent over a SOCK_SEQPACKET pair and
 * received with kist_sync_recv_fd (which may refuse it), then handled like
 * container.c / exec.c do: a LAYER packet is decoded (kist_layer_decode) and added to a report,
 * an ERROR packet is decoded (kist_sync_decode_error).  Checked: a decoded
 * entry encodes back to the same bytes, and the report holding it
 * serialises to JSON that kist_report_from_json reads back with the same
 * entry (the parent stores it as report.json; `kist start` reads it). */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz.h"
#include "layer.h"
#include "report.h"
#include "sync.h"
#include "util.h"

static int sv[2] = { -1, -1 };

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    {
      perror ("fuzz_sync: socketpair");
      abort ();
    }
  int sz = 4 * KIST_SYNC_MAX;
  setsockopt (sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
  setsockopt (sv[1], SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
  return 0;
}

static void
layer (const char *payload, size_t len)
{
  struct kist_layer l;
  if (kist_layer_decode (payload, len, &l) < 0)
    {
      FUZZ_ASSERT (l.name == NULL && l.requested == NULL && l.reason == NULL && l.detail == NULL);
      return;
    }
  FUZZ_ASSERT (l.name != NULL && l.errnum >= 0 && l.errnum <= 4095);

  /* The encoding is canonical: decode then encode gives the packet back. */
  char *buf = NULL;
  size_t n = 0;
  FUZZ_ASSERT (kist_layer_encode (&l, &buf, &n) == 0);
  FUZZ_ASSERT (n == len && memcmp (buf, payload, len) == 0);
  free (buf);

  struct kist_report *r = kist_report_new ("c1", "create", NULL);
  kist_report_add (r, &l);
  char *json = kist_report_to_json (r, true);
  FUZZ_ASSERT (json != NULL);
  struct kist_error *e = NULL;
  struct kist_report *back = kist_report_from_json (json, strlen (json), &e);
  if (back == NULL)
    {
      fprintf (stderr, "the report with a decoded entry does not read back: %s\n%s\n",
               e && e->msg ? e->msg : "?", json);
      abort ();
    }
  /* The parent takes an entry off the wire only when the registry declares
   * its name, and only once per report. */
  {
    struct kist_report *r2 = kist_report_new ("c1", "create", NULL);
    struct kist_error *e2 = NULL;
    int took = kist_sync_add_layer (r2, (const char *) payload, len, "the fuzzer", &e2);
    FUZZ_ASSERT ((took == 0) == kist_layer_known (l.name));
    kist_error_free (e2);
    e2 = NULL;
    if (took == 0)
      FUZZ_ASSERT (kist_sync_add_layer (r2, (const char *) payload, len, "the fuzzer", &e2) < 0);
    kist_error_free (e2);
    kist_report_free (r2);
  }
  const struct kist_layer *b = kist_report_find (back, l.name);
  FUZZ_ASSERT (b != NULL && b->applied == l.applied);
  FUZZ_ASSERT ((b->requested == NULL) == (l.requested == NULL));
  char *text = kist_report_json_to_text (json, strlen (json), &e);
  FUZZ_ASSERT (text != NULL);
  free (text);
  fuzz_error_check_free (&e);
  kist_report_free (back);
  free (json);
  kist_report_free (r);
  kist_layer_clear (&l);
}

static void
error (const char *payload, size_t len)
{
  struct kist_error *e = NULL;
  int r = kist_sync_decode_error (payload, len, &e);
  FUZZ_ASSERT (r < 0 && e != NULL && e->msg != NULL);
  FUZZ_ASSERT (e->status >= 0 && e->status < 256 && e->errnum >= 0 && e->errnum < 4096);
  fuzz_error_check_free (&e);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size > KIST_SYNC_MAX)
    return 0;
  if (send (sv[0], data, size, MSG_NOSIGNAL) != (ssize_t) size)
    {
      perror ("fuzz_sync: send");
      abort ();
    }
  char type = 0;
  char *payload = NULL;
  size_t len = 0;
  int passfd = -1;
  int r = kist_sync_recv_fd (sv[1], &type, &payload, &len, &passfd);
  FUZZ_ASSERT (passfd == -1);
  if (r < 0)
    {
      /* Refused (EOF for an empty packet; a receiver that checks packets
       * refuses malformed ones): nothing handed out. */
      FUZZ_ASSERT (payload == NULL);
      FUZZ_ASSERT (size == 0 || r == -EPROTO || r == -EMSGSIZE);
      return 0;
    }
  FUZZ_ASSERT (size > 0 && type == (char) data[0] && len == size - 1);
  FUZZ_ASSERT (memcmp (payload, data + 1, len) == 0 && payload[len] == '\0');
  switch (type)
    {
    case KIST_SYNC_LAYER:
      layer (payload, len);
      break;
    case KIST_SYNC_BATCH:
      {
        /* Framing checked by the receive: each entry decoded or refused. */
        struct kist_report *rb = kist_report_new ("c1", "create", NULL);
        struct kist_error *eb = NULL;
        if (kist_sync_add_batch (rb, payload, len, "the fuzzer", &eb) < 0)
          fuzz_error_check_free (&eb);
        FUZZ_ASSERT (eb == NULL);
        kist_report_free (rb);
      }
      break;
    case KIST_SYNC_ERROR:
      error (payload, len);
      break;
    default:
      /* The start client's path (container.c): a stream read, NUL added. */
      error (payload, len);
      break;
    }
  free (payload);
  return 0;
}
