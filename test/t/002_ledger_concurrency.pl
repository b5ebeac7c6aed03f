# Concurrent releases never overspend a budget and never lose a charge.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('main');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'contcount'\nmax_connections = 40");
$node->start;
$node->safe_psql('postgres', q{
    CREATE EXTENSION contcount;
    SELECT contcount.create_ledger('race', 1.0);
    SELECT contcount.create_ledger('drain', 0.1);
    CREATE TABLE events AS SELECT i FROM generate_series(1, 100) i;
});

# Eight sessions at once each spend 0.6 of 1.0: exactly one succeeds.
$node->pgbench(
	'--no-vacuum --client=8 --transactions=1',
	2,
	[qr/processed: 1\/8/],
	[qr/would be overspent/],
	'eight racing releases of 0.6 from 1.0',
	{ 'race' => "SET contcount.ledger = 'race';\nSELECT contcount.noisy_count(0.6) FROM events;\n" });
is($node->safe_psql('postgres', "SELECT spent FROM contcount.ledgers WHERE name = 'race'"),
	'0.6', 'exactly one was charged');
is($node->safe_psql('postgres', "SELECT count(*) FROM contcount.charges WHERE ledger = 'race'"),
	'1', 'and audited');

# Four sessions drain 0.1 by 0.001: exactly 100 releases, the budget spent
# to the last unit, never beyond.
$node->pgbench(
	'--no-vacuum --client=4 --transactions=40',
	2,
	[qr/processed: 100\/160/],
	[qr/would be overspent/],
	'four sessions draining a budget',
	{ 'drain' => "SET contcount.ledger = 'drain';\nSELECT contcount.noisy_count(0.001) FROM events;\n" });
is($node->safe_psql('postgres', "SELECT spent || ' ' || remaining FROM contcount.ledgers WHERE name = 'drain'"),
	'0.1 0', 'the budget is spent exactly');
is($node->safe_psql('postgres', "SELECT count(*) FROM contcount.charges WHERE ledger = 'drain'"),
	'100', 'one charge per release that returned');

done_testing();
