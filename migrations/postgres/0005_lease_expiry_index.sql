-- The sweepers look only at leases that are not retired (docs/CLUSTER.md, "Failover"):
-- every finished room keeps a retired lease whose expires_at is in the past, so a plain
-- index on expires_at would walk all of them at every sweep. Index the live ones only.
DROP INDEX room_leases_expires_at;
CREATE INDEX room_leases_live_expiry ON room_leases (expires_at) WHERE NOT retired;
