-- contcount--0.2--0.3.sql
--	  The ledger in WAL: charges replicate, survive failover, restores and
--	  upgrades (issue 10).
--
-- The store itself changed in the library (a relation under global/ written
-- through a custom WAL resource manager); a 0.2 store file is taken into it
-- at the first use.  Hardened like the install script: no CREATE OR REPLACE,
-- no IF NOT EXISTS, qualified names, pinned search_path.

\echo Use "ALTER EXTENSION contcount UPDATE TO '0.3'" to load this file. \quit

-- ---------------------------------------------------------------------
-- Ledgers: export and import, for pg_dump, pg_upgrade and a dropped and
-- created extension.
-- ---------------------------------------------------------------------

-- ---------------------------------------------------------------------
-- Counters: a copied counter pays again before it releases.
-- ---------------------------------------------------------------------
