-- Load shedding (docs/CLUSTER.md, "Load shedding"): a node's heartbeat says whether it sheds
-- load, apart from whether it drains. The sweepers read it: a shedding node claims no room
-- of a dead node while another live node does not shed, and only a few at a time when every
-- live node sheds; a drain hands its rooms to nodes that do not shed first. Before this
-- column a shedding node reported itself as draining. Rows of nodes that do not write it
-- (older versions during a rolling deploy) read as not shedding.
ALTER TABLE cluster_nodes ADD COLUMN shedding BOOLEAN NOT NULL DEFAULT false;
