#!/usr/bin/env bash
# Corrections to fuse-native 2.2.6's C glue, then a rebuild of the addon (N-API, against the
# libfuse the package bundles). Idempotent; run by npm's postinstall.
#  1. utimens hands JavaScript the access time twice (tv[0] converted for both arguments), so
#     every mount would store the access time as the modification time set by cp -p, tar or
#     rsync -t. One line is corrected.
#  2. It never tells JavaScript who called: with allow_other a file created by another user would
#     belong to the mounting user, who alone could then chmod it. Each operation now records the
#     caller's uid and gid (fuse_get_context, on the FUSE thread) and the addon exports
#     fuse_native_caller(), which answers [uid, gid] of the operation being dispatched; it is
#     valid during the synchronous call of the operation's JavaScript handler.
#  3. libfuse 2 calls utimens only when both times are set, unless the filesystem sets
#     flag_utime_omit_ok: `touch -m -d` (access time omitted) then succeeded without changing
#     anything. The addon now exports fuse_native_utime_omit_ok(), which a mount calls before
#     mounting to set that flag; utimens then hands JavaScript UTIME_NOW as the current time and
#     UTIME_OMIT as 2^64-1 milliseconds. Mounts that do not call it get the old behaviour.
#  4. libfuse refuses with ENOENT the reads, writes and closes of a file it has no path for (a
#     removed file still open whose directory was removed too), unless the filesystem sets
#     flag_nullpath_ok; then it passes a NULL path, which the glue handed napi_create_string_utf8
#     as is. It now hands JavaScript "" for a missing path, and exports fuse_native_nullpath_ok(),
#     which a mount calls before mounting to set the flag.
#  5. libfuse 2 does not pass on the removal of a file that is still open: inside the unlink it
#     asks for the attributes of a free name `.fuse_hidden<16 hex digits>` and renames the file to
#     it (fuse.c: hidden_name, hide_node), which JavaScript cannot tell from a user's own rename to
#     such a name. The glue now notes, on the FUSE thread, which kernel request asked for those
#     attributes (the request's `unique`, read from libfuse 2.9's per-thread context) and the path
#     it asked with; a rename within that same request, to that same path, is libfuse's hide. The
#     addon exports fuse_native_hiding(), true while such a rename is being dispatched.
#  6. A rename over a file that is still open is two renames in one kernel request: libfuse hides
#     the target first (as in 5), then renames the source over its old name. When the second one
#     fails, the first must be undone, and only the request tells the two apart from an unlink's
#     hide followed by a user's rename. Each rename now records its request's `unique`, and the
#     addon exports fuse_native_request(), that number for the rename being dispatched.
#  7. The hide alone does not say whether its request is an unlink or a rename over the file (the
#     kernel's opcode is not kept where the glue can read it). The process that asked is blocked
#     in that system call meanwhile, and /proc/PID/syscall names it: each operation now also
#     records its caller's pid (fuse_get_context), and the addon exports
#     fuse_native_caller_pid(), that pid for the operation being dispatched.
#  8. After a lazy unmount the kernel ends the connection when the last open file is closed, and
#     drops the RELEASE of that file still queued: JavaScript would count the file open for ever.
#     The FUSE thread now notes when its loop has ended (the kernel has gone), and the addon
#     exports fuse_native_session_ended(), true from then on: no more requests will come.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=node_modules/fuse-native
src=$dir/fuse-native.c
[ -f "$src" ] || exit 0
if grep -q 'FUSE_UINT64_TO_INTS_ARGV(l->mtime, 5)' "$src" && grep -q 'fuse_native_caller' "$src" &&
  grep -q 'fuse_native_utime_omit_ok' "$src" && grep -q 'fuse_native_nullpath_ok' "$src" &&
  grep -q 'fuse_native_hiding' "$src" && grep -q 'fuse_native_request' "$src" &&
  grep -q 'fuse_native_caller_pid' "$src" && grep -q 'fuse_native_session_ended' "$src" &&
  [ -f "$dir/build/Release/fuse.node" ]; then
  exit 0
fi
sed -i 's/FUSE_UINT64_TO_INTS_ARGV(l->atime, 5)/FUSE_UINT64_TO_INTS_ARGV(l->mtime, 5)/' "$src"
if ! grep -q 'fuse_native_caller' "$src"; then
  sed -i \
    -e 's/^static int IS_ARRAY_BUFFER_DETACH_SUPPORTED = 0;$/&\nstatic uint32_t dispatching_uid = 0;\nstatic uint32_t dispatching_gid = 0;/' \
    -e 's/^  int32_t res;$/&\n  uint32_t caller_uid;\n  uint32_t caller_gid;/' \
    -e 's/^  l->op = op_##name;\\$/&\n  l->caller_uid = fuse_get_context()->uid;\\\n  l->caller_gid = fuse_get_context()->gid;\\/' \
    -e 's/^      NAPI_MAKE_CALLBACK(env, NULL, ctx, callback, callbackArgs + 2, argv, NULL)\\$/      dispatching_uid = l->caller_uid;\\\n      dispatching_gid = l->caller_gid;\\\n&/' \
    -e 's/^NAPI_METHOD(fuse_native_mount) {$/NAPI_METHOD(fuse_native_caller) {\n  napi_value ids, uid, gid;\n  napi_create_array_with_length(env, 2, \&ids);\n  napi_create_uint32(env, dispatching_uid, \&uid);\n  napi_create_uint32(env, dispatching_gid, \&gid);\n  napi_set_element(env, ids, 0, uid);\n  napi_set_element(env, ids, 1, gid);\n  return ids;\n}\n\n&/' \
    -e 's/^  NAPI_EXPORT_FUNCTION(fuse_native_signal_mknod)$/&\n  NAPI_EXPORT_FUNCTION(fuse_native_caller)/' \
    "$src"
fi
if ! grep -q 'fuse_native_utime_omit_ok' "$src"; then
  sed -i \
    -e 's/^static int IS_ARRAY_BUFFER_DETACH_SUPPORTED = 0;$/&\nstatic int utime_omit_ok = 0;/' \
    -e 's/^static void populate_stat (uint32_t \*ints, struct stat\* stat) {$/static uint64_t utime_ms (const struct timespec* ts) {\n  if (ts->tv_nsec == UTIME_OMIT) return UINT64_MAX;\n  if (ts->tv_nsec == UTIME_NOW) {\n    struct timespec now;\n    clock_gettime(CLOCK_REALTIME, \&now);\n    return timespec_to_uint64(\&now);\n  }\n  return timespec_to_uint64(ts);\n}\n\n&/' \
    -e 's/^  l->atime = timespec_to_uint64(&tv\[0\]);$/  l->atime = utime_ms(\&tv[0]);/' \
    -e 's/^  l->mtime = timespec_to_uint64(&tv\[1\]);$/  l->mtime = utime_ms(\&tv[1]);/' \
    -e 's/^  if (implemented\[op_utimens\]) ops.utimens = fuse_native_utimens;$/&\n  ops.flag_utime_omit_ok = utime_omit_ok;/' \
    -e 's/^NAPI_METHOD(fuse_native_mount) {$/NAPI_METHOD(fuse_native_utime_omit_ok) {\n  utime_omit_ok = 1;\n  return NULL;\n}\n\n&/' \
    -e 's/^  NAPI_EXPORT_FUNCTION(fuse_native_signal_mknod)$/&\n  NAPI_EXPORT_FUNCTION(fuse_native_utime_omit_ok)/' \
    "$src"
fi
if ! grep -q 'fuse_native_nullpath_ok' "$src"; then
  sed -i \
    -e 's/napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH/napi_create_string_utf8(env, l->path ? l->path : "", NAPI_AUTO_LENGTH/' \
    -e 's/^static int IS_ARRAY_BUFFER_DETACH_SUPPORTED = 0;$/&\nstatic int nullpath_ok = 0;/' \
    -e 's/^  if (implemented\[op_utimens\]) ops.utimens = fuse_native_utimens;$/&\n  ops.flag_nullpath_ok = nullpath_ok;/' \
    -e 's/^NAPI_METHOD(fuse_native_mount) {$/NAPI_METHOD(fuse_native_nullpath_ok) {\n  nullpath_ok = 1;\n  return NULL;\n}\n\n&/' \
    -e 's/^  NAPI_EXPORT_FUNCTION(fuse_native_signal_mknod)$/&\n  NAPI_EXPORT_FUNCTION(fuse_native_nullpath_ok)/' \
    "$src"
fi
if ! grep -q 'fuse_native_hiding' "$src"; then
  sed -i \
    -e 's/^static int IS_ARRAY_BUFFER_DETACH_SUPPORTED = 0;$/&\nstatic int dispatching_hide = 0;\n\/\/ libfuse 2.9: its per-thread context (fuse.c, struct fuse_context_i) and the head of a request\n\/\/ (fuse_i.h, struct fuse_req), whose `unique` is the kernel'"'"'s id of the request being handled.\nstruct estuary_fuse_context { struct fuse_context ctx; void *req; };\nstruct estuary_fuse_req { void *f; uint64_t unique; };\nstatic uint64_t request_unique (void) {\n  struct estuary_fuse_context *c = (struct estuary_fuse_context *) fuse_get_context();\n  if (c == NULL || c->req == NULL) return 0;\n  return ((struct estuary_fuse_req *) c->req)->unique;\n}/' \
    -e 's/^  int32_t res;$/&\n  uint64_t probe_unique;\n  const char *probe_path;\n  int hiding;/' \
    -e 's/^  l->op_fn = fuse_native_dispatch_##name;\\$/&\n  l->hiding = 0;\\/' \
    -e 's/^      dispatching_uid = l->caller_uid;\\$/&\n      dispatching_hide = l->hiding;\\/' \
    -e 's/^FUSE_METHOD(getattr, 1, 1, (const char \*path, struct stat \*stat), {$/&\n  l->probe_unique = request_unique();\n  l->probe_path = path;/' \
    -e 's/^FUSE_METHOD_VOID(rename, 2, 0, (const char \*path, const char \*dest), {$/&\n  l->hiding = l->probe_path == dest \&\& l->probe_unique != 0 \&\& l->probe_unique == request_unique();\n  l->probe_path = NULL;/' \
    -e 's/^NAPI_METHOD(fuse_native_mount) {$/NAPI_METHOD(fuse_native_hiding) {\n  napi_value hiding;\n  napi_get_boolean(env, dispatching_hide != 0, \&hiding);\n  return hiding;\n}\n\n&/' \
    -e 's/^  NAPI_EXPORT_FUNCTION(fuse_native_signal_mknod)$/&\n  NAPI_EXPORT_FUNCTION(fuse_native_hiding)/' \
    "$src"
fi
if ! grep -q 'fuse_native_request' "$src"; then
  sed -i \
    -e 's/^static int dispatching_hide = 0;$/&\nstatic uint64_t dispatching_request = 0;/' \
    -e 's/^  int hiding;$/&\n  uint64_t request;/' \
    -e 's/^  l->hiding = 0;\\$/&\n  l->request = 0;\\/' \
    -e 's/^      dispatching_hide = l->hiding;\\$/&\n      dispatching_request = l->request;\\/' \
    -e 's/^  l->hiding = l->probe_path == dest .*$/&\n  l->request = request_unique();/' \
    -e 's/^NAPI_METHOD(fuse_native_mount) {$/NAPI_METHOD(fuse_native_request) {\n  napi_value request;\n  napi_create_double(env, (double) dispatching_request, \&request);\n  return request;\n}\n\n&/' \
    -e 's/^  NAPI_EXPORT_FUNCTION(fuse_native_signal_mknod)$/&\n  NAPI_EXPORT_FUNCTION(fuse_native_request)/' \
    "$src"
fi
if ! grep -q 'fuse_native_caller_pid' "$src"; then
  sed -i \
    -e 's/^static uint32_t dispatching_gid = 0;$/&\nstatic uint32_t dispatching_pid = 0;/' \
    -e 's/^  uint32_t caller_gid;$/&\n  uint32_t caller_pid;/' \
    -e 's/^  l->caller_gid = fuse_get_context()->gid;\\$/&\n  l->caller_pid = (uint32_t) fuse_get_context()->pid;\\/' \
    -e 's/^      dispatching_gid = l->caller_gid;\\$/&\n      dispatching_pid = l->caller_pid;\\/' \
    -e 's/^NAPI_METHOD(fuse_native_mount) {$/NAPI_METHOD(fuse_native_caller_pid) {\n  napi_value pid;\n  napi_create_uint32(env, dispatching_pid, \&pid);\n  return pid;\n}\n\n&/' \
    -e 's/^  NAPI_EXPORT_FUNCTION(fuse_native_signal_mknod)$/&\n  NAPI_EXPORT_FUNCTION(fuse_native_caller_pid)/' \
    "$src"
fi
if ! grep -q 'fuse_native_session_ended' "$src"; then
  sed -i \
    -e 's/^static int IS_ARRAY_BUFFER_DETACH_SUPPORTED = 0;$/&\nstatic volatile int session_ended = 0;/' \
    -e 's/^  fuse_loop_mt(ft->fuse);$/&\n  session_ended = 1;/' \
    -e 's/^NAPI_METHOD(fuse_native_mount) {$/NAPI_METHOD(fuse_native_session_ended) {\n  napi_value ended;\n  napi_get_boolean(env, session_ended != 0, \&ended);\n  return ended;\n}\n\n&/' \
    -e 's/^  NAPI_EXPORT_FUNCTION(fuse_native_signal_mknod)$/&\n  NAPI_EXPORT_FUNCTION(fuse_native_session_ended)/' \
    "$src"
fi
. scripts/node-gyp.sh
if ! gyp_rebuild "$dir" /tmp/estuary-fuse-native-build.log; then
  echo "estuary: could not rebuild fuse-native (log: /tmp/estuary-fuse-native-build.log); mounts will store" \
    "access times as modification times, and files created through --allow-other belong to the mounting user." \
    "Install python3, make and g++, then run npm rebuild." >&2
fi
