-- One ticket table per sequence; {{table}} is replaced by the quoted table name
-- (`tickets_<sequence>`). One row only: each ticket is `REPLACE INTO {{table}} VALUES (NULL, 'a')`
-- and its AUTO_INCREMENT id. A gated sequence's stub column is renamed, and a retired one gains a column
-- (src/core/versions.ts). InnoDB, because MyISAM loses acknowledged tickets in a crash.
CREATE TABLE IF NOT EXISTS {{table}} (
  id   BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  stub CHAR(1)         NOT NULL DEFAULT '',
  PRIMARY KEY (id),
  UNIQUE KEY stub (stub)
) ENGINE=InnoDB;
