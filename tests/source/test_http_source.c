/* A byte source over HTTP/1.1 range requests (plain sockets, 127.0.0.1), against the Python
 * server of tests/source/run_source_tests.py, which counts the body bytes it serves.
 *
 *   test_http_source PORT NAME HEADER_BYTES
 *
 * NAME is the 20,000-tensor file the server serves under /honest/, /short/, /over/ and
 * /changing/ (each mode a way of lying, see the driver); HEADER_BYTES is 8 + its header length.
 * GET /_bytes answers the body bytes served since the last /_bytes. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "tensorblob.h"

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      return 1;                                                                \
    }                                                                          \
  } while (0)

typedef struct http_src {
  int port;
  char path[256];
  uint64_t size; /* from HEAD */
  int closes;
} http_src;

static int connect_local(int port) {
  struct sockaddr_in a;
  struct timeval tv;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  /* A guard against a server that stops answering, not a timing check. */
  tv.tv_sec = 30;
  tv.tv_usec = 0;
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  memset(&a, 0, sizeof(a));
  a.sin_family = AF_INET;
  a.sin_port = htons((uint16_t)port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

static int send_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = send(fd, p, n, 0);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* One request; the response head (NUL-terminated) into head, up to body_cap bytes of the
 * body into body; *body_len is the body length the server sent (all of it counted, even past
 * body_cap). Returns the status code, or -1. */
static int request(int port, const char *req, char *head, size_t head_cap, uint8_t *body, uint64_t body_cap,
                   uint64_t *body_len) {
  int fd = connect_local(port), code = -1;
  size_t hl = 0;
  char *end = NULL;
  uint64_t got = 0;
  if (fd < 0) return -1;
  if (send_all(fd, req, strlen(req)) != 0) goto out;
  while (!end) {
    ssize_t r;
    if (hl + 1 >= head_cap) goto out;
    r = recv(fd, head + hl, head_cap - 1 - hl, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) goto out;
    hl += (size_t)r;
    head[hl] = '\0';
    end = strstr(head, "\r\n\r\n");
  }
  {
    size_t head_bytes = (size_t)(end - head) + 4;
    size_t extra = hl - head_bytes;
    size_t take = extra < body_cap ? extra : (size_t)body_cap;
    if (body && take) memcpy(body, head + head_bytes, take);
    got = extra;
    end[2] = '\0';
  }
  for (;;) {
    uint8_t tmp[16384];
    ssize_t r = recv(fd, tmp, sizeof(tmp), 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) goto out;
    if (r == 0) break;
    if (body && got < body_cap) {
      uint64_t take = body_cap - got < (uint64_t)r ? body_cap - got : (uint64_t)r;
      memcpy(body + got, tmp, (size_t)take);
    }
    got += (uint64_t)r;
  }
  if (sscanf(head, "HTTP/1.%*d %d", &code) != 1) code = -1;
  *body_len = got;
out:
  close(fd);
  return code;
}

static const char *header_value(const char *head, const char *name) {
  const char *p = head;
  size_t n = strlen(name);
  while ((p = strstr(p, "\r\n")) != NULL) {
    p += 2;
    if (strncasecmp(p, name, n) == 0 && p[n] == ':') return p + n + 1;
  }
  return NULL;
}

/* The read function: GET with Range: bytes=offset-(offset+len-1). */
static int64_t http_read(void *user, uint64_t offset, void *dst, size_t len) {
  http_src *s = (http_src *)user;
  char req[512], head[8192];
  uint64_t body = 0;
  const char *cr;
  int code;
  if (len == 0) return 0;
  snprintf(req, sizeof(req),
           "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nRange: bytes=%llu-%llu\r\nConnection: close\r\n\r\n", s->path,
           (unsigned long long)offset, (unsigned long long)(offset + len - 1));
  code = request(s->port, req, head, sizeof(head), (uint8_t *)dst, len, &body);
  if (code == 416) return 0; /* the range starts at or past the end */
  if (code != 206) return TBLOB_E_IO;
  cr = header_value(head, "Content-Range");
  if (cr) {
    const char *slash = strchr(cr, '/');
    if (slash && strtoull(slash + 1, NULL, 10) != s->size) return TBLOB_E_SOURCE_CHANGED;
  }
  return (int64_t)body; /* more than len: the library reports the overread */
}

static void http_close(void *user) { ++((http_src *)user)->closes; }

static uint64_t served(int port) {
  char head[4096];
  uint8_t body[64];
  uint64_t n = 0;
  memset(body, 0, sizeof(body));
  if (request(port, "GET /_bytes HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", head, sizeof(head), body,
              sizeof(body) - 1, &n) != 200)
    return UINT64_MAX;
  return strtoull((const char *)body, NULL, 10);
}

static tblob_status open_http(http_src *s, int port, const char *mode, const char *name, tblob_model **m,
                              tblob_diag *diag) {
  char req[512], head[8192];
  uint64_t body = 0;
  const char *cl;
  tblob_byte_source bs = TBLOB_BYTE_SOURCE_INIT;
  memset(s, 0, sizeof(*s));
  s->port = port;
  snprintf(s->path, sizeof(s->path), "/%s/%s", mode, name);
  snprintf(req, sizeof(req), "HEAD %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", s->path);
  if (request(port, req, head, sizeof(head), NULL, 0, &body) != 200) return TBLOB_E_IO;
  cl = header_value(head, "Content-Length");
  if (!cl) return TBLOB_E_IO;
  s->size = strtoull(cl, NULL, 10);
  bs.size = s->size;
  bs.read = http_read;
  bs.close = http_close;
  bs.user = s;
  bs.name = s->path;
  return tblob_model_open_source(&bs, NULL, m, diag);
}

int main(int argc, char **argv) {
  int port;
  uint64_t header_bytes, idx, n;
  http_src s;
  tblob_model *m = NULL;
  tblob_diag diag = TBLOB_DIAG_INIT;
  tblob_tensor_info info = TBLOB_TENSOR_INFO_INIT;
  uint8_t buf[4096];
  tblob_status st;
  if (argc < 4) {
    fprintf(stderr, "usage: %s PORT NAME HEADER_BYTES\n", argv[0]);
    return 2;
  }
  port = atoi(argv[1]);
  header_bytes = strtoull(argv[3], NULL, 10);
  CHECK(served(port) != UINT64_MAX); /* resets the count */

  /* Honest: listing fetches the header bytes only; one tensor adds exactly its bytes. */
  st = open_http(&s, port, "honest", argv[2], &m, &diag);
  if (st != TBLOB_OK) {
    fprintf(stderr, "open: %s: %s\n", tblob_status_name(st), diag.message);
    return 1;
  }
  n = served(port);
  CHECK(tblob_model_tensor_count(m) == 20000);
  printf("honest: listing 20000 tensors fetched %llu bytes (header: %llu)\n", (unsigned long long)n,
         (unsigned long long)header_bytes);
  CHECK(n == header_bytes);
  CHECK(tblob_tensor_find(m, "t.4321", 6, &idx, &diag) == TBLOB_OK);
  CHECK(tblob_tensor_at(m, idx, &info, &diag) == TBLOB_OK);
  CHECK(info.data_length <= sizeof(buf));
  CHECK(tblob_tensor_read(m, idx, 0, buf, (size_t)info.data_length, &diag) == TBLOB_OK);
  n = served(port);
  printf("honest: one tensor of %llu bytes fetched %llu bytes\n", (unsigned long long)info.data_length,
         (unsigned long long)n);
  CHECK(n == info.data_length);
  {
    /* The bytes are the file's: the same tensor through a mapped open of the server's file is
     * checked by the driver; here the values are the driver's pattern (element k of t.i is
     * i + k as float32). */
    float f;
    memcpy(&f, buf, 4);
    CHECK(f == 4321.0f);
  }
  tblob_model_close(m);
  CHECK(s.closes == 1);

  /* Lying servers. */
  {
    static const struct {
      const char *mode;
      tblob_status want;
    } lies[] = {{"short", TBLOB_E_SOURCE_SHORT_READ},
                {"over", TBLOB_E_SOURCE_OVERREAD},
                {"changing", TBLOB_E_SOURCE_CHANGED}};
    size_t k;
    for (k = 0; k < sizeof(lies) / sizeof(lies[0]); ++k) {
      m = NULL;
      st = open_http(&s, port, lies[k].mode, argv[2], &m, &diag);
      printf("%s: %s (%s)\n", lies[k].mode, tblob_status_name(st), diag.message);
      CHECK(st == lies[k].want);
      CHECK(m == NULL && s.closes == 1);
    }
  }
  printf("ok\n");
  return 0;
}
