# A counter over a source's dimension through kill -9 under concurrent
# inserts of the same persons in several keys, with random aborts: the
# step takes the log, bounds each person across keys and writes every
# key's state and release in its one transaction.  After each crash every
# key's releases are as they were, and what the steps kept per person
# (counter_unit, counter_unit_key) is exactly what the keys released (an
# epsilon large enough that each release is its exact count), within
# max_rows rows and max_groups keys a person.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ContcountTest;

my $node = PostgreSQL::Test::Cluster->new('counter_keys');
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
    SELECT contcount.create_ledger('app', 10000);
    CREATE TABLE events (person int, country text, at timestamptz DEFAULT now());
    SELECT contcount.protect_table('events', 'events', 'person', 'at', 'app', max_rows => 3,
                                   max_groups => 2);
    SELECT contcount.source_dimension('events', 'country', ARRAY['a', 'b', 'c', 'd', 'e']);
    SELECT contcount.create_counter('by_country', 1000, horizon => 100, step => '1 day',
        ledger => 'app', source => 'events', dimension => 'country', mechanism => 'binary');
});

# rows of 10 persons that reach their bounds and of 10,000 that mostly do
# not, in random keys (one undeclared), a quarter rolled back, some in a
# savepoint rolled back
my $script = $node->basedir . '/inserts.sql';
open(my $fh, '>', $script) or die;
print $fh q{
\set rows random(1, 10)
\set abort random(0, 3)
BEGIN;
INSERT INTO events (person, country)
SELECT CASE WHEN random() < 0.3 THEN (random() * 9)::int + 1 ELSE (random() * 9999)::int + 100 END,
       (ARRAY['a', 'b', 'c', 'd', 'e', 'x'])[1 + (random() * 5)::int]
FROM generate_series(1, :rows);
SAVEPOINT s;
INSERT INTO events (person, country)
SELECT CASE WHEN random() < 0.3 THEN (random() * 9)::int + 1 ELSE (random() * 9999)::int + 100 END,
       (ARRAY['a', 'b', 'c', 'd', 'e', 'x'])[1 + (random() * 5)::int]
FROM generate_series(1, :rows);
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
		"SELECT string_agg(key || t || ':' || noisy_count, ',' ORDER BY key, t) "
		  . "FROM contcount.history_by_key('by_country')");
}

# the latest releases add up to what the steps kept, and no person is
# beyond its bounds
sub exactly_once
{
	return $node->safe_psql('postgres', q{
        SELECT (SELECT coalesce(sum(noisy_count), 0) FROM contcount.current_by_key('by_country'))
               = (SELECT coalesce(sum(rows), 0) FROM contcount.counter_unit)
           AND (SELECT coalesce(max(rows), 0) <= 3 FROM contcount.counter_unit)
           AND (SELECT coalesce(max(n), 0) <= 2 FROM (SELECT count(*) AS n FROM contcount.counter_unit_key
                                                     GROUP BY unit_digest) k)});
}

crash_rounds($node, $script, 'by_country', \&history, \&exactly_once,
	"the keys released exactly what the steps kept, within the bounds");
is($node->safe_psql('postgres', q{
    SELECT max(rows) = 3 AND (SELECT max(n) FROM (SELECT count(*) AS n FROM contcount.counter_unit_key
                                                  GROUP BY unit_digest) k) = 2
    FROM contcount.counter_unit}), 't', 'persons reached their bounds of rows and keys');

done_testing();
