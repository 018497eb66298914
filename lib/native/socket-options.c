// Two socket options Node does not expose for TCP, over N-API (no rebuild per Node).
//
//   roundTrip(fd) -> number
//     The kernel's smoothed round-trip time of the TCP connection `fd`, in microseconds
//     (TCP_INFO, tcpi_rtt), or -1 when it cannot tell (not a TCP socket, closed).
//   setSendBuffer(fd, bytes) -> boolean
//     Sets SO_SNDBUF (the kernel doubles it for its own bookkeeping, caps it at
//     net.core.wmem_max, and stops autotuning that socket's buffer). False when it fails.

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <sys/socket.h>
#include <node_api.h>

static int int_args(napi_env env, napi_callback_info info, size_t want, int32_t* out) {
  size_t argc = 2;
  napi_value argv[2];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < want) return 0;
  for (size_t i = 0; i < want; i++) {
    if (napi_get_value_int32(env, argv[i], &out[i]) != napi_ok) return 0;
  }
  return 1;
}

static napi_value round_trip(napi_env env, napi_callback_info info) {
  int32_t args[1];
  if (!int_args(env, info, 1, args)) {
    napi_throw_type_error(env, NULL, "roundTrip(fd)");
    return NULL;
  }
  struct tcp_info ti;
  socklen_t len = sizeof ti;
  double us = -1;
  if (getsockopt(args[0], IPPROTO_TCP, TCP_INFO, &ti, &len) == 0 && len >= sizeof ti) us = ti.tcpi_rtt;
  napi_value result;
  napi_create_double(env, us, &result);
  return result;
}

static napi_value set_send_buffer(napi_env env, napi_callback_info info) {
  int32_t args[2];
  if (!int_args(env, info, 2, args) || args[1] <= 0) {
    napi_throw_type_error(env, NULL, "setSendBuffer(fd, bytes)");
    return NULL;
  }
  int bytes = args[1];
  napi_value result;
  napi_get_boolean(env, setsockopt(args[0], SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes) == 0, &result);
  return result;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  napi_create_function(env, "roundTrip", NAPI_AUTO_LENGTH, round_trip, NULL, &fn);
  napi_set_named_property(env, exports, "roundTrip", fn);
  napi_create_function(env, "setSendBuffer", NAPI_AUTO_LENGTH, set_send_buffer, NULL, &fn);
  napi_set_named_property(env, exports, "setSendBuffer", fn);
  return exports;
}
