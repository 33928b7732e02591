-- ticketd backend schema. Applied by `ticketd init` to every backend (and by docker's init
-- scripts); every statement is idempotent.

-- One row per sequence. The row is written after the sequence's ticket table exists, so a row
-- means the sequence is usable on this backend.
CREATE TABLE IF NOT EXISTS ticketd_sequences (
  name        VARCHAR(48)     NOT NULL,
  block_size  BIGINT UNSIGNED NOT NULL,
  start_after BIGINT UNSIGNED NOT NULL DEFAULT 0,
  max_id      BIGINT UNSIGNED NOT NULL,
  created_at  TIMESTAMP(3)    NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (name)
) ENGINE=InnoDB;

-- This backend's identity, written once by `init`. MySQL has @@server_uuid, MariaDB has none,
-- and a restored backup or a cloned data directory must not pass for another backend.
CREATE TABLE IF NOT EXISTS ticketd_backend (
  singleton  TINYINT UNSIGNED NOT NULL,
  backend_id CHAR(36)         NOT NULL,
  created_at TIMESTAMP(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (singleton)
) ENGINE=InnoDB;

-- High-water marks: the highest ticket ticketd has used per sequence and residue class
-- (ticket ≡ stripe_residue mod stripe_increment), written to every backend before the ticket's
-- block is handed out. A backend restored from an old backup is caught by the copies its peers hold.
CREATE TABLE IF NOT EXISTS ticketd_marks (
  sequence         VARCHAR(48)      NOT NULL,
  stripe_increment BIGINT UNSIGNED  NOT NULL,
  stripe_residue   BIGINT UNSIGNED  NOT NULL,
  ticket           BIGINT UNSIGNED  NOT NULL,
  backend_id       CHAR(36)         NOT NULL,
  updated_at       TIMESTAMP(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (sequence, stripe_increment, stripe_residue)
) ENGINE=InnoDB;
