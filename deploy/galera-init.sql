-- Run once, when galera1 initialises an empty datadir (docker-compose.yml, profile `cluster`).
-- The account of the nodes' health agents (deploy/clustercheck): it logs in from beside its node
-- and reads the node's status, which needs no privileges at all.
CREATE USER IF NOT EXISTS 'clustercheck'@'%';
