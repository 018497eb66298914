// Metric names, in one place: the gateway exports them at /metrics and the agent beside it reads
// some of them back to report load. Renaming one is a breaking change for dashboards and agents.

export const GATEWAY_METRICS = {
  /** counter {method, status_class}: requests answered. */
  requests: 'estuary_gateway_requests_total',
  /** counter {tier="memory"|"disk"}: requests answered from the cache. */
  hits: 'estuary_gateway_cache_hits_total',
  /** counter: memory hits answered by the front reader, before Node's HTTP server read them (gateway/front-reader.ts); part of hits_total. */
  frontHits: 'estuary_gateway_front_hits_total',
  /** counter: requests that had to go upstream. */
  misses: 'estuary_gateway_cache_misses_total',
  /** counter: requests that joined an upstream fetch already in flight. */
  collapsed: 'estuary_gateway_collapsed_requests_total',
  /** counter: body bytes sent to clients. The agent derives load (KB/s) from its rate. */
  bytesOut: 'estuary_gateway_bytes_sent_total',
  /** counter: body bytes received from upstreams. */
  bytesIn: 'estuary_gateway_bytes_received_total',
  /** counter {upstream, reason}: failed upstream attempts. */
  upstreamErrors: 'estuary_gateway_upstream_errors_total',
  /** histogram {upstream}: time to upstream response headers, seconds. */
  upstreamLatency: 'estuary_gateway_upstream_latency_seconds',
  /** gauge {tier}: bytes held in the cache. */
  cacheBytes: 'estuary_gateway_cache_bytes',
  /** gauge {tier}: objects held in the cache. */
  cacheObjects: 'estuary_gateway_cache_objects',
  /** gauge: memory the disk tier's index holds, estimated, summed over the worker processes. */
  diskIndexBytes: 'estuary_gateway_disk_index_bytes',
  /** gauge: entry files a worker reading its disk index has not taken into it yet, summed over the workers; 0 once every index is whole. */
  diskIndexUnread: 'estuary_gateway_disk_index_unread_files',
  /** gauge: address space of disk entries' bodies held mapped from the page cache, summed over the worker processes (pages shared with the page cache, not memory of the gateway's own). */
  diskMappedBytes: 'estuary_gateway_disk_mapped_bytes',
  /** gauge: 1 when disk hits are read into the process rather than mapped from the page cache, because the addon in lib/native was not built. */
  diskMappingUnavailable: 'estuary_gateway_disk_mapping_unavailable',
  /** counter: content-addressed objects refused because their bytes did not match their name. */
  verifyFailures: 'estuary_gateway_verify_failures_total',
  /** gauge: upstream connection pools held (one per origin with connections or requests). */
  upstreamPools: 'estuary_gateway_upstream_pools',
  /** counter: memory-reducing collections run while idle after a burst (gateway/memory-reclaim.ts). */
  memoryReclaims: 'estuary_gateway_memory_reclaims_total',
  /**
   * counter {guard="claim"|"follow"}: a worker gave up waiting on the cluster (a claim the primary
   * did not answer, a followed fill that went silent) and fetched by itself. A backstop: any
   * non-zero rate is a bug or an overloaded primary.
   */
  clusterGuardFired: 'estuary_gateway_cluster_guard_fired_total',
  /** counter {method, status_class}: requests answered by the S3 endpoint (--s3). */
  s3Requests: 'estuary_gateway_s3_requests_total',
  /** counter: disk objects removed to make room (the --disk-cache bound or a full file system). */
  diskEvictions: 'estuary_gateway_disk_evictions_total',
  /** gauge {upstream}: Unix time of the last answer from an upstream (max over workers). */
  upstreamLastSuccess: 'estuary_gateway_upstream_last_success_timestamp_seconds',
  /** gauge {upstream}: Unix time of the last failed attempt (max over workers); later than the success: down. */
  upstreamLastFailure: 'estuary_gateway_upstream_last_failure_timestamp_seconds',
} as const;

/** Exported by the gateway's primary process (gateway/cluster/primary.ts), beside the workers' sums. */
export const GATEWAY_PRIMARY_METRICS = {
  /** counter: gateway worker processes that died and were restarted by the primary. */
  workerRestarts: 'estuary_gateway_worker_restarts_total',
  /** gauge: worker deaths within the crash-loop window; at the limit the gateway gives up. */
  workerRecentDeaths: 'estuary_gateway_worker_recent_deaths',
  /** counter: workers restarted because they stopped reading what the primary sends them. */
  workerBacklogOverflows: 'estuary_gateway_worker_backlog_overflows_total',
  /** gauge: bytes the primary holds for the slowest worker to read (bounded; see gateway/cluster/outbox.ts). */
  workerBacklog: 'estuary_gateway_worker_backlog_bytes',
} as const;

export const DISCOVERY_METRICS = {
  /** counter {result="accepted"|reason}: heartbeats consumed. */
  heartbeats: 'estuary_discovery_heartbeats_total',
  /** gauge {state="verified"|"unverified"}: caches in the registry. */
  caches: 'estuary_discovery_caches',
  /** gauge {state="late"|"failing"|…}: caches by the state the page shows them in. */
  cacheStates: 'estuary_discovery_cache_states',
  /** counter {endpoint}: nearest-cache queries answered. */
  queries: 'estuary_discovery_queries_total',
  /** gauge {state="connected"|"disconnected"|"refused"}: 1 for the broker connection's state. */
  broker: 'estuary_discovery_broker',
} as const;

/** The gateway's own endpoints; in reverse mode these paths are not forwarded upstream. */
export const GATEWAY_PATHS = {
  metrics: '/metrics',
  health: '/healthz',
  /** GET: GatewaySummary JSON (lib/gateway-summary.ts), read by the agent. */
  summary: '/estuary/v1/summary',
  /** GET: the status page for people (also at / in forward mode, where / is no proxy request). */
  status: '/estuary/v1/status',
  /** Admin API prefix (bearer token): stats, purge. */
  admin: '/estuary/v1/admin',
} as const;
