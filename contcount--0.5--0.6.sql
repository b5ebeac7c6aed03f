-- contcount--0.5--0.6.sql
--	  Sealed releases: what a release runs as the extension's owner reports
--	  nothing to the caller's session, shared room is shared fairly, and
--	  every bad input is refused with its SQLSTATE.
--
-- A new database runs every script from contcount--0.1.sql on, so fresh
-- installs and upgrades end in the same objects.  Hardened like the install
-- script: no CREATE OR REPLACE, no IF NOT EXISTS, qualified names, pinned
-- search_path.

\echo Use "ALTER EXTENSION contcount UPDATE TO '0.6'" to load this file. \quit
