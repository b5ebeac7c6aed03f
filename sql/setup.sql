-- The extension, and helpers the other tests share.
CREATE EXTENSION contcount;

-- Every release is charged: the tests spend from one large ledger, selected
-- for every later connection to this database.
SELECT contcount.create_ledger('tests', 1000000000);
DO $$ BEGIN
    EXECUTE format('ALTER DATABASE %I SET contcount.ledger = %L', current_database(), 'tests');
END $$;

CREATE SCHEMA test;

-- SQLSTATE and message of a statement's error, or 'no error'.
CREATE FUNCTION test.error_of(statement text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE statement;
    RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

-- Variance and fourth cumulant of discrete Laplace noise of scale b,
-- written from the formulas, apart from the extension's own code.
CREATE FUNCTION test.dlap_var(b float8) RETURNS float8
LANGUAGE sql IMMUTABLE AS $$
    SELECT 2 * exp(-1 / b) / (1 - exp(-1 / b)) ^ 2
$$;

CREATE FUNCTION test.dlap_kappa4(b float8) RETURNS float8
LANGUAGE sql IMMUTABLE AS $$
    SELECT 2 * exp(-1 / b) * (1 + 4 * exp(-1 / b) + exp(-2 / b)) / (1 - exp(-1 / b)) ^ 4
$$;

\dx contcount
