-- The events table on a cluster: a replicated table on every shard, and a Distributed table named
-- `events` in front of it, so that readers and writers use the same name as on a single node.
-- Columns, sorting key and index are those of ../single-node/001-create-events.sql; see there why.
--
-- Sharding by distinct_id keeps a person's events on one shard, and a redelivered event (same uuid,
-- same distinct_id) on the shard that already holds it, where ReplacingMergeTree collapses it.
-- `{shard}` and `{replica}` are the servers' own macros; the runner fills in `{database}`,
-- `{cluster_name}` and `{on_cluster}`.
CREATE TABLE IF NOT EXISTS {database}.events_local {on_cluster}
(
    uuid UUID,
    event String,
    properties String CODEC(ZSTD(3)),
    timestamp DateTime64(6, 'UTC'),
    team_id Int64,
    distinct_id String,
    elements_chain String DEFAULT '' CODEC(ZSTD(3)),
    created_at DateTime64(6, 'UTC'),
    person_id UUID,
    person_properties String DEFAULT '{}' CODEC(ZSTD(3)),
    person_created_at DateTime64(3, 'UTC'),
    `$group_0` String DEFAULT replaceRegexpAll(JSONExtractRaw(properties, '$group_0'), '^"|"$', ''),
    `$group_1` String DEFAULT replaceRegexpAll(JSONExtractRaw(properties, '$group_1'), '^"|"$', ''),
    `$group_2` String DEFAULT replaceRegexpAll(JSONExtractRaw(properties, '$group_2'), '^"|"$', ''),
    `$group_3` String DEFAULT replaceRegexpAll(JSONExtractRaw(properties, '$group_3'), '^"|"$', ''),
    `$group_4` String DEFAULT replaceRegexpAll(JSONExtractRaw(properties, '$group_4'), '^"|"$', ''),
    _timestamp DateTime('UTC') DEFAULT now(),
    _offset UInt64 DEFAULT 0,
    INDEX timestamp_minmax timestamp TYPE minmax GRANULARITY 1
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/events', '{replica}', _timestamp)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (team_id, toDate(timestamp), uuid);

CREATE TABLE IF NOT EXISTS {database}.events {on_cluster}
AS {database}.events_local
ENGINE = Distributed('{cluster_name}', '{database}', 'events_local', cityHash64(distinct_id));
