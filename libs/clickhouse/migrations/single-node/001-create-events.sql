-- The events table on a single node (and the embedded chDB engine).
--
-- ReplacingMergeTree(_timestamp) collapses rows with the same sorting key, so an event inserted
-- twice (a redelivered Kafka batch) is one event: the sorting key ends with the event's uuid, which
-- deduplicates it within its project and day. Readers use FINAL (or LIMIT 1 BY uuid) until the
-- background merges have caught up.
--
-- timestamp_minmax: the sorting key orders a project's rows by day only. The per-granule min/max of
-- the exact timestamp lets the listing's `ORDER BY timestamp DESC LIMIT n` skip granules that
-- cannot reach the top n (dynamic top-k filtering) and lets after/before/cursor bounds prune within
-- a day. A projection ordered by timestamp would duplicate the table, is ignored by FINAL reads,
-- and needs deduplicate_merge_projection_mode on a ReplacingMergeTree.
CREATE TABLE IF NOT EXISTS {database}.events
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
ENGINE = ReplacingMergeTree(_timestamp)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (team_id, toDate(timestamp), uuid);
