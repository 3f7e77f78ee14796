-- Renewals rewrite every live lease row once per lease-renew-ms (docs/CLUSTER.md, "Lease
-- connections"). With expires_at in an index, no such update could be a HOT update: each
-- one added an entry to both indexes and left a dead row version behind (at 7,500 rooms,
-- 2.26 million dead versions and 170 MB in six minutes with autovacuum off), and every
-- fence check and renewal walked through them. Now no index names expires_at, so a
-- renewal is a HOT update (the page prunes its old versions itself, without VACUUM), and
-- pages keep half their space free for them. The sweepers find the live leases through
-- a partial index on the rows that are not retired and filter the expired ones there.
DROP INDEX room_leases_live_expiry;
CREATE INDEX room_leases_live ON room_leases (room_code) WHERE NOT retired;
ALTER TABLE room_leases SET (fillfactor = 50);
