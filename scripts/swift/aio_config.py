"""Configuration text for a single-node Swift with the S3 API (pure: no I/O).

One directory holds everything: etc/ (swift.conf, rings, server configs), srv/d1 (the only
storage device) and log/. Every listener is on one address: 127.0.0.1 unless the launcher is
told otherwise (an address inside a network namespace); the launcher chooses the ports.
"""

from dataclasses import dataclass

# Part power 10 is 1024 partitions: enough to spread objects over hash directories, small enough
# that the ring builds in milliseconds. One replica on one device: a test server, not a cluster.
PART_POWER = 10
REPLICAS = 1
DEVICE = 'd1'

# 1 MiB instead of Swift's 64 KiB chunks: with the default, GETs run at half the speed.
CHUNK = 1024 * 1024

# AWS allows 10,000 parts; s3api defaults to 1,000 and SLO must allow at least as many segments.
MAX_PARTS = 10000

ACCOUNT_USER = 'test:tester'
ACCOUNT_KEY = 'testing'
REGION = 'us-east-1'

SERVERS = ('account', 'container', 'object', 'proxy')


@dataclass(frozen=True)
class Layout:
    """Where things live and which ports they listen on."""

    root: str
    user: str
    ports: dict  # name ('account', 'container', 'object', 'proxy', 'memcached', 'log') -> port
    host: str = '127.0.0.1'
    workers: int = 2
    log_level: str = 'INFO'

    @property
    def etc(self) -> str:
        return f'{self.root}/etc'

    @property
    def devices(self) -> str:
        return f'{self.root}/srv'

    @property
    def logs(self) -> str:
        return f'{self.root}/log'

    def conf_path(self, server: str) -> str:
        return f'{self.etc}/{server}-server.conf'


def swift_conf() -> str:
    # A fixed hash prefix/suffix: a directory restarted later must map names to the same paths.
    return '\n'.join([
        '[swift-hash]',
        'swift_hash_path_suffix = estuary-aio',
        'swift_hash_path_prefix = estuary-aio',
        '',
        '[storage-policy:0]',
        'name = Policy-0',
        'default = yes',
        '',
    ])


def _default_section(layout: Layout, server: str, workers: int) -> list:
    return [
        '[DEFAULT]',
        f'bind_ip = {layout.host}',
        f'bind_port = {layout.ports[server]}',
        # A port taken between choosing and binding fails fast; the launcher picks new ports.
        'bind_timeout = 2',
        f'workers = {workers}',
        f'user = {layout.user}',
        f'swift_dir = {layout.etc}',
        f'devices = {layout.devices}',
        'mount_check = false',
        'disable_fallocate = true',
        # No /dev/log on these machines: the launcher collects syslog datagrams into log/.
        f'log_udp_host = {layout.host}',
        f'log_udp_port = {layout.ports["log"]}',
        f'log_level = {layout.log_level}',
        f'log_name = {server}-server',
        '',
    ]


def storage_conf(layout: Layout, server: str) -> str:
    """account-server.conf, container-server.conf or object-server.conf."""
    # Only the object server moves bulk data; account and container servers get one worker.
    workers = layout.workers if server == 'object' else 1
    lines = _default_section(layout, server, workers)
    lines += [
        '[pipeline:main]',
        f'pipeline = healthcheck {server}-server',
        '',
        f'[app:{server}-server]',
        f'use = egg:swift#{server}',
    ]
    if server == 'object':
        lines += [f'network_chunk_size = {CHUNK}', f'disk_chunk_size = {CHUNK}']
    lines += ['', '[filter:healthcheck]', 'use = egg:swift#healthcheck', '']
    return '\n'.join(lines)


PROXY_PIPELINE = (
    'catch_errors gatekeeper healthcheck proxy-logging cache listing_formats bulk s3api tempauth '
    'copy slo dlo versioned_writes proxy-logging proxy-server'
)


def proxy_conf(layout: Layout) -> str:
    lines = _default_section(layout, 'proxy', layout.workers)
    tempauth_user = 'user_' + ACCOUNT_USER.replace(':', '_')
    lines += [
        '[pipeline:main]',
        f'pipeline = {PROXY_PIPELINE}',
        '',
        '[app:proxy-server]',
        'use = egg:swift#proxy',
        'account_autocreate = true',
        f'object_chunk_size = {CHUNK}',
        f'client_chunk_size = {CHUNK}',
        '',
        '[filter:s3api]',
        'use = egg:swift#s3api',
        f'location = {REGION}',
        f'max_upload_part_num = {MAX_PARTS}',
        '',
        '[filter:tempauth]',
        'use = egg:swift#tempauth',
        f'{tempauth_user} = {ACCOUNT_KEY} .admin',
        '',
        '[filter:cache]',
        'use = egg:swift#memcache',
        f'memcache_servers = {layout.host}:{layout.ports["memcached"]}',
        '',
        '[filter:slo]',
        'use = egg:swift#slo',
        f'max_manifest_segments = {MAX_PARTS}',
        '',
    ]
    for name in ('catch_errors', 'gatekeeper', 'healthcheck', 'proxy-logging', 'listing_formats',
                 'bulk', 'copy', 'dlo', 'versioned_writes'):
        egg = name.replace('-', '_')
        lines += [f'[filter:{name}]', f'use = egg:swift#{egg}', '']
    return '\n'.join(lines)
