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

-- Keys of opaque sequences (README, "Opaque IDs"): 32 random bytes each, the same on every backend.
-- Written in one transaction with the sequence's row, so an opaque sequence never exists without
-- its key, and a backend lacking this table (an older schema) holds no opaque sequence.
CREATE TABLE IF NOT EXISTS ticketd_sequence_keys (
  name       VARCHAR(48)  NOT NULL,
  scheme     VARCHAR(32)  NOT NULL,
  id_key     BINARY(32)   NOT NULL,
  created_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (name)
) ENGINE=InnoDB;

-- Sequences that ticketd 0.5 and older must not serve (opaque ones, and whatever a later version
-- adds): their settings are here, with the oldest ticketd that understands them. Their row in
-- ticketd_sequences is a decoy with max_id 0, which those versions cannot issue from. When init gates
-- a sequence an older version made, it also renames its ticket table's stub column, so an old process
-- that had loaded it fails on its next REPLACE (src/core/versions.ts).
CREATE TABLE IF NOT EXISTS ticketd_gated_sequences (
  name          VARCHAR(48)     NOT NULL,
  block_size    BIGINT UNSIGNED NOT NULL,
  start_after   BIGINT UNSIGNED NOT NULL,
  max_id        BIGINT UNSIGNED NOT NULL,
  needs_version VARCHAR(16)     NOT NULL,
  created_at    TIMESTAMP(3)    NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (name)
) ENGINE=InnoDB;

-- Retired sequences (DELETE /v1/sequences/{name}): never issued again, and their names never reused.
-- Their ticket table (counter kept) and claims stay; the ticket table gets a column more, so a REPLACE
-- of any ticketd version fails on it, and the sequence is gated for this version (needs_version).
CREATE TABLE IF NOT EXISTS ticketd_retired_sequences (
  name       VARCHAR(48)  NOT NULL,
  retired_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (name)
) ENGINE=InnoDB;

-- The oldest ticketd that may use this backend at all. Every ticketd since 0.6 reads it on each new
-- connection and refuses the backend when it is older; init only ever raises it.
CREATE TABLE IF NOT EXISTS ticketd_schema (
  singleton     TINYINT UNSIGNED NOT NULL,
  needs_version VARCHAR(16)      NOT NULL,
  updated_at    TIMESTAMP(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (singleton)
) ENGINE=InnoDB;

-- This backend's identity, written once by `init`. MySQL has @@server_uuid, MariaDB has none,
-- and a restored backup or a cloned data directory must not pass for another backend.
CREATE TABLE IF NOT EXISTS ticketd_backend (
  singleton  TINYINT UNSIGNED NOT NULL,
  backend_id CHAR(36)         NOT NULL,
  created_at TIMESTAMP(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (singleton)
) ENGINE=InnoDB;

-- Claims: every ticket whose block ticketd hands out is first inserted here, on a peer of the
-- backend it came from (never on that backend: a restored backup would bring its own stale copy
-- back). The key is (sequence, ticket), so a ticket issued a second time, by any backend, after any
-- regression, fails its claim with a duplicate key and its block is never served. The serving
-- account needs INSERT, DELETE and SELECT here, nothing else.
CREATE TABLE IF NOT EXISTS ticketd_claims (
  sequence         VARCHAR(48)     NOT NULL,
  ticket           BIGINT UNSIGNED NOT NULL,
  stripe_increment BIGINT UNSIGNED NOT NULL,
  stripe_residue   BIGINT UNSIGNED NOT NULL,
  backend_id       CHAR(36)        NOT NULL,
  claimed_at       TIMESTAMP(3)    NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (sequence, ticket),
  KEY by_class (sequence, stripe_increment, stripe_residue, ticket)
) ENGINE=InnoDB;

-- Claim floors: when old claims of a residue class are pruned, the highest pruned ticket is kept
-- here first, and any ticket at or below it is refused too. Rows are only inserted and deleted
-- (the floor of a class is the MAX), so no UPDATE grant is needed.
CREATE TABLE IF NOT EXISTS ticketd_claim_floors (
  sequence         VARCHAR(48)     NOT NULL,
  stripe_increment BIGINT UNSIGNED NOT NULL,
  stripe_residue   BIGINT UNSIGNED NOT NULL,
  floor_ticket     BIGINT UNSIGNED NOT NULL,
  created_at       TIMESTAMP(3)    NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (sequence, stripe_increment, stripe_residue, floor_ticket)
) ENGINE=InnoDB;

-- High-water marks of ticketd 0.2 (one row per sequence and residue class). No longer written;
-- kept so that `init` on an upgraded backend turns them into claim floors: every ticket at or
-- below an old mark was used, so it is refused from now on.
CREATE TABLE IF NOT EXISTS ticketd_marks (
  sequence         VARCHAR(48)      NOT NULL,
  stripe_increment BIGINT UNSIGNED  NOT NULL,
  stripe_residue   BIGINT UNSIGNED  NOT NULL,
  ticket           BIGINT UNSIGNED  NOT NULL,
  backend_id       CHAR(36)         NOT NULL,
  updated_at       TIMESTAMP(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (sequence, stripe_increment, stripe_residue)
) ENGINE=InnoDB;

INSERT IGNORE INTO ticketd_claim_floors (sequence, stripe_increment, stripe_residue, floor_ticket)
  SELECT sequence, stripe_increment, stripe_residue, ticket FROM ticketd_marks;

-- Snowflake worker pools (README, "Snowflake worker IDs"): the same row on every backend. `owners`
-- lists the auto_increment_offsets of the backends that grant the pool's worker IDs: worker w is
-- granted only by the backend whose offset is owners[w mod count], so two backends never grant one
-- worker ID, and every other backend keeps a claim of each lease (src/core/worker-leases.ts).
CREATE TABLE IF NOT EXISTS ticketd_worker_pools (
  name            VARCHAR(48)       NOT NULL,
  worker_bits     TINYINT UNSIGNED  NOT NULL,
  ttl_ms          INT UNSIGNED      NOT NULL,
  max_skew_ms     INT UNSIGNED      NOT NULL,
  reuse_delay_ms  INT UNSIGNED      NOT NULL,
  owners          VARCHAR(255)      NOT NULL,
  created_at      TIMESTAMP(3)      NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (name)
) ENGINE=InnoDB;

-- Worker-ID leases, one row per pool and worker ID. On the owner it is the lease; on every other
-- backend the same row is its claim, with times by that backend's own clock, so an owner restored
-- from a backup (which forgot a live lease) meets the claim and grants nothing. A worker ID is free
-- on a backend when free_ms <= its NOW(6). Rows are written with REPLACE: the serving account
-- needs only INSERT, DELETE and SELECT, as for claims.
CREATE TABLE IF NOT EXISTS ticketd_worker_leases (
  pool           VARCHAR(48)      NOT NULL,
  worker_id      INT UNSIGNED     NOT NULL,
  epoch          BIGINT UNSIGNED  NOT NULL,
  holder         VARCHAR(128)     NOT NULL,
  high_water_ms  BIGINT UNSIGNED  NOT NULL,
  expires_ms     BIGINT UNSIGNED  NOT NULL,
  free_ms        BIGINT UNSIGNED  NOT NULL,
  released_ms    BIGINT UNSIGNED  NULL,
  last_used_ms   BIGINT UNSIGNED  NULL,
  PRIMARY KEY (pool, worker_id)
) ENGINE=InnoDB;

-- Strict sequences (ids "strict"): the row marks the sequence strict and holds its leader lease and
-- the bound ahead of what the leader serves. Written by the leader with epoch-fenced compare-and-set
-- on a majority of the backends; expires_ms is judged by this backend's own clock; bound only ever
-- rises (GREATEST). A new leader starts above the bound of every backend of the majority it won
-- (src/core/strict.ts).
CREATE TABLE IF NOT EXISTS ticketd_strict_sequences (
  name        VARCHAR(48)      NOT NULL,
  epoch       BIGINT UNSIGNED  NOT NULL,
  leader      VARCHAR(64)      NOT NULL,
  leader_url  VARCHAR(255)     NOT NULL,
  expires_ms  BIGINT UNSIGNED  NOT NULL,
  bound       DECIMAL(20, 0)   NOT NULL,
  PRIMARY KEY (name)
) ENGINE=InnoDB;

-- The largest maxId a sequence may ever be widened to: a migrated sequence's legacy table keeps
-- AUTO_INCREMENT above it for the old version's inserts (docs/migrating.md), so IDs above it are theirs.
CREATE TABLE IF NOT EXISTS ticketd_sequence_ceilings (
  name       VARCHAR(48)      NOT NULL,
  ceiling    BIGINT UNSIGNED  NOT NULL,
  reason     VARCHAR(255)     NOT NULL,
  created_at TIMESTAMP(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (name)
) ENGINE=InnoDB;

-- What each front end did with the IDs it leased, per sequence (docs/operating.md, "How many IDs
-- were lost, and why"): its running totals, written every few seconds and at a clean stop. Each
-- write inserts a row under a new flush_no and deletes the instance's older rows, so the serving
-- account needs only INSERT, DELETE and SELECT, as for claims. Readers take each instance's row of
-- the highest flush_no on any backend: a backend restored from a backup cannot take figures back.
-- A row that is not stopped and was not rewritten for a few of its flush_every_ms is a front end
-- that crashed: what it held counts as lost.
CREATE TABLE IF NOT EXISTS ticketd_usage (
  sequence          VARCHAR(48)      NOT NULL,
  instance          VARCHAR(64)      NOT NULL,
  flush_no          BIGINT UNSIGNED  NOT NULL,
  stopped           TINYINT UNSIGNED NOT NULL,
  flush_every_ms    INT UNSIGNED     NOT NULL,
  ids_leased        BIGINT UNSIGNED  NOT NULL,
  ids_handed_out    BIGINT UNSIGNED  NOT NULL,
  ids_returned      BIGINT UNSIGNED  NOT NULL,
  ids_reclaimed     BIGINT UNSIGNED  NOT NULL,
  ids_cached        BIGINT UNSIGNED  NOT NULL,
  ids_lost_shutdown BIGINT UNSIGNED  NOT NULL,
  ids_lost_retired  BIGINT UNSIGNED  NOT NULL,
  ids_lost_surplus  BIGINT UNSIGNED  NOT NULL,
  seconds_left      DOUBLE           NULL,
  written_at        TIMESTAMP(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (sequence, instance, flush_no),
  KEY by_instance (instance, flush_no)
) ENGINE=InnoDB;

-- Ordered sequences created with reuse (PUT … {"reuse":true}): their unused IDs are given back and
-- served again, so their later IDs are not always larger. Opaque sequences always take IDs back and
-- are not listed; strict ones never do. A ticketd older than 0.13 does not read this table and
-- serves such a sequence as a plain ordered one: it neither gives IDs back nor reuses them.
CREATE TABLE IF NOT EXISTS ticketd_reusing_sequences (
  name       VARCHAR(48)  NOT NULL,
  created_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (name)
) ENGINE=InnoDB;

-- Ranges given back (docs/uniqueness.md, "Giving ranges back"): the unused tail of a cached range or
-- of a client's leased block, written to one backend by the process that stopped serving it. Its key
-- is (sequence, last_id, generation): the generation is one more than that of the range it was cut
-- from (a fresh block is generation 0), so a tail returned twice has one key, and a reused range
-- returned again has a new one. Reuse deletes the row (exactly one) and claims the key on every
-- backend; `ticketd fence` deletes every row.
CREATE TABLE IF NOT EXISTS ticketd_returned_ranges (
  sequence    VARCHAR(48)     NOT NULL,
  last_id     BIGINT UNSIGNED NOT NULL,
  generation  INT UNSIGNED    NOT NULL,
  first_id    BIGINT UNSIGNED NOT NULL,
  returned_at TIMESTAMP(3)    NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (sequence, last_id, generation)
) ENGINE=InnoDB;

-- Claims of returned ranges, on every backend, under the returned range's key: a range is reused
-- only by the process whose insert went through on every backend, so a racer, a row brought back
-- by a restored backup, or a tail returned twice meets the key somewhere and is never used. Never
-- pruned: a row is a few bytes per range given back.
CREATE TABLE IF NOT EXISTS ticketd_range_claims (
  sequence   VARCHAR(48)     NOT NULL,
  last_id    BIGINT UNSIGNED NOT NULL,
  generation INT UNSIGNED    NOT NULL,
  claimed_at TIMESTAMP(3)    NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (sequence, last_id, generation)
) ENGINE=InnoDB;

-- The secret that signs the leases of blocks clients may give back (POST …/blocks answers a `lease`),
-- made by the first ticketd that needs it; each backend has its own, and a lease signed with any of
-- them is accepted. Never shown.
CREATE TABLE IF NOT EXISTS ticketd_lease_secrets (
  singleton  TINYINT UNSIGNED NOT NULL,
  secret     BINARY(32)       NOT NULL,
  created_at TIMESTAMP(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (singleton)
) ENGINE=InnoDB;
