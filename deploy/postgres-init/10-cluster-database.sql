-- Run by the postgres image on a fresh volume (docker-compose.yml mounts this directory
-- on /docker-entrypoint-initdb.d): the database of the compose file's cluster nodes.
CREATE DATABASE parchis_cluster OWNER parchis;
