// Read-only shared mappings of files, so that a body in the page cache can be written to a socket
// with one copy (the kernel's, into the socket) instead of two (a read into a buffer, then that).
// Node cannot map files; this is the smallest addon that can, over N-API (no rebuild per Node).
//
//   map(fd, length) -> Buffer | null
//     Maps the first `length` bytes of the open file `fd` (length > 0). Answers null, mapping
//     nothing, when any of those pages is not in the page cache (mincore): touching it would make
//     the event loop wait for the disk, and the caller reads it through the thread pool instead.
//     Throws an Error with `code` (the errno's name) when mmap fails.
//   resident(buffer) -> boolean
//     Whether every page of a mapping from map() is still in the page cache (one mincore).
//   release(arrayBuffer)
//     Detaches a mapping's ArrayBuffer (every view of it becomes empty) so that it is unmapped at
//     once rather than at the next garbage collection. Call it when no write uses it any more.
//
// A file cut short while mapped: a user-space access past its new end raises SIGBUS, but the
// kernel's own access (writev to a socket) fails the write with EFAULT instead. The mapping is
// therefore only handed to socket writes, never read by JavaScript.

#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <node_api.h>

typedef struct {
  void* addr;
  size_t len;
} mapping_t;

static void unmap(napi_env env, void* data, void* hint) {
  (void)env;
  (void)data;
  mapping_t* m = hint;
  munmap(m->addr, m->len);
  free(m);
}

static napi_value throw_errno(napi_env env, int err, const char* what) {
  char msg[160];
  snprintf(msg, sizeof msg, "%s: %s", what, strerror(err));
  napi_value code, text, error;
  const char* name = err == ENOMEM ? "ENOMEM" : err == EACCES ? "EACCES" : err == EBADF ? "EBADF"
    : err == EINVAL ? "EINVAL" : err == ENODEV ? "ENODEV" : err == EAGAIN ? "EAGAIN" : "EIO";
  napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &code);
  napi_create_string_utf8(env, msg, NAPI_AUTO_LENGTH, &text);
  napi_create_error(env, code, text, &error);
  napi_throw(env, error);
  return NULL;
}

static int all_resident(void* addr, size_t len) {
  long page = sysconf(_SC_PAGESIZE);
  size_t pages = (len + (size_t)page - 1) / (size_t)page;
  unsigned char small[4096];
  unsigned char* vec = pages <= sizeof small ? small : malloc(pages);
  if (vec == NULL) return 0;
  int ok = mincore(addr, len, vec) == 0;
  for (size_t i = 0; ok && i < pages; i++) ok = vec[i] & 1;
  if (vec != small) free(vec);
  return ok;
}

static napi_value map(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2) {
    napi_throw_type_error(env, NULL, "map(fd, length)");
    return NULL;
  }
  int32_t fd;
  int64_t length;
  if (napi_get_value_int32(env, argv[0], &fd) != napi_ok || napi_get_value_int64(env, argv[1], &length) != napi_ok ||
      fd < 0 || length <= 0) {
    napi_throw_range_error(env, NULL, "map(fd, length): a file descriptor and a length above 0");
    return NULL;
  }
  size_t len = (size_t)length;
  void* addr = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
  if (addr == MAP_FAILED) return throw_errno(env, errno, "mmap");
  napi_value result;
  if (!all_resident(addr, len)) {
    munmap(addr, len);
    napi_get_null(env, &result);
    return result;
  }
  mapping_t* m = malloc(sizeof *m);
  if (m == NULL) {
    munmap(addr, len);
    return throw_errno(env, ENOMEM, "map");
  }
  m->addr = addr;
  m->len = len;
  if (napi_create_external_buffer(env, len, addr, unmap, m, &result) != napi_ok) {
    munmap(addr, len);
    free(m);
    return throw_errno(env, ENOMEM, "napi_create_external_buffer");
  }
  return result;
}

static napi_value resident(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  void* data;
  size_t len;
  bool is;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 ||
      napi_is_buffer(env, argv[0], &is) != napi_ok || !is || napi_get_buffer_info(env, argv[0], &data, &len) != napi_ok) {
    napi_throw_type_error(env, NULL, "resident(buffer)");
    return NULL;
  }
  long page = sysconf(_SC_PAGESIZE);
  uintptr_t start = (uintptr_t)data & ~(uintptr_t)(page - 1);
  napi_value result;
  napi_get_boolean(env, len > 0 && all_resident((void*)start, len + ((uintptr_t)data - start)), &result);
  return result;
}

static napi_value release(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  bool is;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 ||
      napi_is_arraybuffer(env, argv[0], &is) != napi_ok || !is) {
    napi_throw_type_error(env, NULL, "release(arrayBuffer)");
    return NULL;
  }
  bool detached;
  if (napi_is_detached_arraybuffer(env, argv[0], &detached) == napi_ok && !detached) {
    napi_detach_arraybuffer(env, argv[0]);
  }
  return NULL;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  napi_create_function(env, "map", NAPI_AUTO_LENGTH, map, NULL, &fn);
  napi_set_named_property(env, exports, "map", fn);
  napi_create_function(env, "resident", NAPI_AUTO_LENGTH, resident, NULL, &fn);
  napi_set_named_property(env, exports, "resident", fn);
  napi_create_function(env, "release", NAPI_AUTO_LENGTH, release, NULL, &fn);
  napi_set_named_property(env, exports, "release", fn);
  return exports;
}
