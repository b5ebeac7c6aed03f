# A counter over a protected source through kill -9 under concurrent
# inserts of the same persons with random aborts: the inserting
# transactions append their persons' rows to contcount.counter_unit_log,
# the step bounds and deletes them in its own transaction.  After each
# crash every release is as it was, and every committed row is counted
# exactly once within its person's bound: released plus pending equals
# the sum over persons of min(max_rows, committed rows), and what the steps
# kept per person (counter_unit) equals what they released.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ContcountTest;

my $node = PostgreSQL::Test::Cluster->new('unit_log');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'contcount'
contcount.database = 'postgres'
restart_after_crash = on
max_connections = 20
});
$node->start;
$node->safe_psql('postgres', q{
    CREATE EXTENSION contcount;
    SELECT contcount.create_ledger('app', 100);
    CREATE TABLE events (person int, at timestamptz DEFAULT now());
    SELECT contcount.protect_table('events', 'events', 'person', 'at', 'app', max_rows => 20);
    SELECT contcount.create_counter('people', 1, horizon => 100000, step => '1 day',
        ledger => 'app', source => 'events', mechanism => 'binary');
});

# rows of 10 persons that reach their bound and of 100,000 that do not,
# single rows and batches, a quarter rolled back, some in a savepoint
# rolled back
my $script = $node->basedir . '/inserts.sql';
open(my $fh, '>', $script) or die;
print $fh q{
\set rows random(1, 20)
\set abort random(0, 3)
BEGIN;
INSERT INTO events (person) SELECT CASE WHEN random() < 0.2 THEN (random() * 9)::int + 1
    ELSE (random() * 99999)::int + 1000 END FROM generate_series(1, :rows);
SAVEPOINT s;
INSERT INTO events (person) SELECT CASE WHEN random() < 0.2 THEN (random() * 9)::int + 1
    ELSE (random() * 99999)::int + 1000 END FROM generate_series(1, :rows);
\if :abort = 1
ROLLBACK TO SAVEPOINT s;
\endif
\if :abort = 0
ROLLBACK;
\else
COMMIT;
\endif
};
close $fh;

sub history
{
	return $node->safe_psql('postgres',
		"SELECT string_agg(t || ':' || noisy_count, ',' ORDER BY t) FROM contcount.history('people')");
}

sub exactly_once
{
	return $node->safe_psql('postgres', q{
        SELECT (SELECT sum(least(n, 20)) FROM (SELECT count(*) AS n FROM events GROUP BY person) p)
               = i.exact_released + i.pending
           AND i.exact_released = (SELECT coalesce(sum(rows), 0) FROM contcount.counter_unit)
        FROM contcount.counter_internals('people') i});
}

crash_rounds($node, $script, 'people', \&history, \&exactly_once,
	"every committed row counted once, within its person's bound");
cmp_ok($node->safe_psql('postgres', "SELECT max(rows) FROM contcount.counter_unit"), '==', 20,
	'persons reached their bound');

done_testing();
