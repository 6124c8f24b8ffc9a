-- Run once, when galera1 initialises an empty datadir (docker-compose.yml, profile `cluster`).
-- HAProxy's health check logs in as `haproxy` (no password, no privileges): see deploy/haproxy.cfg.
CREATE USER IF NOT EXISTS 'haproxy'@'%';
