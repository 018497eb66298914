{
  "targets": [
    {
      "target_name": "mapped_file",
      "sources": ["mapped-file.c"],
      "cflags": ["-O2", "-Wall", "-Wextra"],
      "defines": ["NAPI_VERSION=8"]
    },
    {
      "target_name": "socket_options",
      "sources": ["socket-options.c"],
      "cflags": ["-O2", "-Wall", "-Wextra"],
      "defines": ["NAPI_VERSION=8"]
    }
  ]
}
