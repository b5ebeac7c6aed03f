-- contcount--0.1--0.2.sql
--	  Soundness: nothing an untrusted role does in SQL may escalate, crash the
--	  server or release for less epsilon than it reveals (issue 9).
--
-- A new database runs contcount--0.1.sql and then this script, so fresh
-- installs and upgrades end in the same objects.  Hardened like the install
-- script: no CREATE OR REPLACE, no IF NOT EXISTS, qualified names, pinned
-- search_path.

\echo Use "ALTER EXTENSION contcount UPDATE TO '0.2'" to load this file. \quit

-- Aggregate support functions run only inside contcount's own aggregates,
-- which PostgreSQL calls with the aggregate owner's rights: nobody else may
-- build an aggregate from them (and each checks where it runs, too).
REVOKE ALL ON FUNCTION contcount.running_count_step(internal, bigint, contcount.mechanism) FROM PUBLIC;
REVOKE ALL ON FUNCTION contcount.running_count_step(internal, bigint, float8, bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION contcount.running_count_final(internal) FROM PUBLIC;
REVOKE ALL ON FUNCTION contcount.noisy_count_step(bigint, float8, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION contcount.noisy_count_final(bigint) FROM PUBLIC;
