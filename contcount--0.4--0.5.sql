-- contcount--0.4--0.5.sql
--	  Protected sources, second part: filters on public dimensions and
--	  counters that count at most max_rows rows per person (issue 11); zCDP
--	  ledgers (issue 13).
--
-- A new database runs every script from contcount--0.1.sql on, so fresh
-- installs and upgrades end in the same objects.  Hardened like the install
-- script: no CREATE OR REPLACE, no IF NOT EXISTS, qualified names, pinned
-- search_path.

\echo Use "ALTER EXTENSION contcount UPDATE TO '0.5'" to load this file. \quit

-- ---------------------------------------------------------------------
-- Protected sources (issue 11)
-- ---------------------------------------------------------------------

-- ---------------------------------------------------------------------
-- zCDP ledgers (issue 13)
-- ---------------------------------------------------------------------
