-- The index of ../single-node/002-add-arrival-index.sql (see there why), on every shard's
-- replicated table; the Distributed `events` table in front of it has no data to index.
ALTER TABLE {database}.events_local {on_cluster} ADD INDEX IF NOT EXISTS arrival_minmax greatest(timestamp, created_at) TYPE minmax GRANULARITY 1;

ALTER TABLE {database}.events_local {on_cluster} MATERIALIZE INDEX IF EXISTS arrival_minmax;
