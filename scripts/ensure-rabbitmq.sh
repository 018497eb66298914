#!/usr/bin/env bash
# Makes sure a RabbitMQ broker answers on 127.0.0.1:5672, starting the local one if needed.
# Started detached, as these machines have no init system; it is left running for other users.
set -euo pipefail
port_open() { (exec 3<>/dev/tcp/127.0.0.1/5672) 2>/dev/null; }
if port_open; then echo "RabbitMQ is up on 127.0.0.1:5672"; exit 0; fi
if ! command -v rabbitmq-server >/dev/null; then
  echo "rabbitmq-server is not installed: apt-get install rabbitmq-server" >&2
  exit 1
fi
echo "starting RabbitMQ (rabbitmq-server -detached)"
rabbitmq-server -detached
for _ in $(seq 1 120); do
  if port_open; then echo "RabbitMQ is up on 127.0.0.1:5672"; exit 0; fi
  sleep 1
done
echo "RabbitMQ did not open 127.0.0.1:5672 within 120 s; see /var/log/rabbitmq/" >&2
exit 1
