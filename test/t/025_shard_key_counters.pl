# Counters over a dimension of a sharded source: a coordinator whose
# source table is hash-partitioned by the unit, its two partitions
# postgres_fdw foreign tables on two shards that run contcount;
# applications insert on the shards (as a role that is not a superuser),
# each shard logs every row's key, and bounds each person across the keys
# the coordinator declared (max_groups keys in key order, max_rows rows)
# when the coordinator's step asks; the step adds each key's counts.
# - each key's released count (epsilon 1000: exact, see exact_by_key)
#   equals the per-key bounded count computed in plain SQL on the shards,
#   a key not declared left out before the bound (a person's undeclared
#   key never takes one of their max_groups keys), for a counter of rows
#   and a counter of distinct persons;
# - kill -9 of the coordinator while its step waits inside a shard's seal:
#   the step released nothing, a later step counts the rows, once;
# - a shard stopped for a few steps: delayed, its counts come once it is
#   back, none lost, none doubled;
# - a counter over a sharded source with per-block budgets is refused
#   (0A000).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ContcountTest;

my ($max_rows, $max_groups) = (3, 2);
my @declared = ('phone', 'tv', 'web');
my $take = 'contcount.shard_feed_take(text, text, text, text, integer, bigint, text, text[], '
  . 'integer, boolean)';

my @shards;
for my $name ('kfeed1', 'kfeed2')
{
	my $shard = start_contcount_node($name, "restart_after_crash = on");
	$shard->safe_psql('postgres', qq{
		CREATE EXTENSION contcount;
		CREATE ROLE coord LOGIN;
		CREATE ROLE app LOGIN;
		CREATE TABLE events (user_id int, at timestamptz DEFAULT now(), device text);
		GRANT SELECT, INSERT ON events TO coord, app;
		GRANT EXECUTE ON FUNCTION $take TO coord;
		SELECT contcount.feed_shard('events', 'user_id');
	});
	push @shards, $shard;
}

my $coord = start_contcount_node('kfeed_coordinator', "contcount.database = 'postgres'\nrestart_after_crash = on");
my $servers = foreign_partitions_sql(\@shards, 2);
my $keys = join(',', map { "'$_'" } @declared);
$coord->safe_psql('postgres', qq{
	CREATE EXTENSION postgres_fdw;
	CREATE EXTENSION contcount;
	CREATE TABLE events (user_id int, at timestamptz DEFAULT now(), device text)
	  PARTITION BY HASH (user_id);
	$servers
	SELECT contcount.create_ledger('data', 1000000);
	SELECT contcount.create_ledger('team', 1000000);
	SELECT contcount.protect_table('events', 'events', 'user_id', 'at', 'data', $max_rows,
	    max_groups => $max_groups);
	SELECT contcount.source_dimension('events', 'device', ARRAY[$keys]);
	CREATE ROLE analyst LOGIN;
	ALTER ROLE analyst SET contcount.ledger = 'team';
	SELECT contcount.grant_source('events', 'analyst');
});
$coord->safe_psql('postgres', q{
	SELECT contcount.create_counter('by_device', 1000, horizon => 1000, step => '1 day',
	    source => 'events', dimension => 'device', mechanism => 'binary');
	SELECT contcount.create_counter('people_by_device', 1000, horizon => 1000, step => '1 day',
	    source => 'events', dimension => 'device', mechanism => 'binary', count => 'persons');
}, extra_params => [ '-U', 'analyst' ]);
wait_for_step_worker($coord);
for my $shard (@shards)
{
	ok($shard->poll_query_until('postgres',
			'SELECT count(*) = 2 AND bool_and(key_column = \'device\') FROM contcount.shard_feed'),
		$shard->name . ": both counters' feeds are open, with the dimension's column");
}

sub tick
{
	$coord->safe_psql('postgres', "SELECT contcount.tick('$_')", extra_params => [ '-U', 'analyst' ])
	  for ('by_device', 'people_by_device');
	return;
}

sub delayed
{
	return $coord->safe_psql('postgres',
		"SELECT string_agg(DISTINCT server, ',' ORDER BY server) FROM contcount.counter_shards WHERE delayed");
}

# Each declared key's count, bounded as the shards must: each person's
# declared keys in key order, the first max_groups of them, and in them
# rows up to max_rows in all (persons: a row a key, up to the counter's
# sensitivity, the least of max_rows, max_groups and the declared keys).
# A person's rows are inserted in one transaction, so the bound over steps
# is the bound over all their rows.
sub expected
{
	my ($persons) = @_;
	my $sensitivity = (sort { $a <=> $b } ($max_rows, $max_groups, scalar @declared))[0];
	my $rows = $persons ? 'least(1, r.n)' : 'r.n';
	my $room = $persons ? $sensitivity : $max_rows;
	my %sum;
	for my $shard (@shards)
	{
		my $out = $shard->safe_psql('postgres', qq{
			WITH per AS (SELECT user_id, device, count(*) AS n FROM events
			             WHERE user_id IS NOT NULL AND device = ANY (ARRAY[$keys])
			             GROUP BY user_id, device),
			r AS (SELECT device, $rows AS n,
			             row_number() OVER (PARTITION BY user_id ORDER BY device COLLATE "C") AS g,
			             sum($rows) OVER (PARTITION BY user_id ORDER BY device COLLATE "C"
			                               ROWS UNBOUNDED PRECEDING) - $rows AS before
			      FROM per r)
			SELECT device, sum(least(n, greatest($room - before, 0))) FROM r
			WHERE g <= $max_groups GROUP BY device});
		for (split /\n/, $out)
		{
			my ($key, $n) = split /\|/;
			$sum{$key} += $n;
		}
	}
	return join(',', map { "$_=" . ($sum{$_} // 0) } @declared);
}

# Each key's released count at the latest step.  Epsilon 1000: a key's
# noise is integer-valued (or rounded) with mean 0, so the chance that a
# release is not the exact count is at most 4 * stddev^2 (Markov's
# inequality on its square); the test checks that the sum of 4 * stddev^2
# over the releases it compares stays below 1e-6, its false-alarm rate.
my $doubt = 0;
sub released
{
	my ($counter) = @_;
	my $out = $coord->safe_psql('postgres',
		"SELECT key, noisy_count, 4 * stddev ^ 2 FROM contcount.current_by_key('$counter') ORDER BY key",
		extra_params => [ '-U', 'analyst' ]);
	my %got;
	for (split /\n/, $out)
	{
		my ($key, $n, $risk) = split /\|/;
		$got{$key} = $n;
		$doubt += $risk;
	}
	return join(',', map { "$_=" . ($got{$_} // 'none') } @declared);
}

# Ticks until a step read both shards for both counters, then: each key's
# rows counted once, within each person's bounds?
sub counted_once
{
	my ($what) = @_;
	tick() for 1 .. 2;
	for (1 .. 30)
	{
		last if delayed() eq '';
		sleep 1;
		tick();
	}
	is(delayed(), '', "$what: both shards read");
	note("$what: released " . released('by_device') . ', persons ' . released('people_by_device'));
	is(released('by_device'), expected(0), "$what: each key's rows counted once, within the bounds");
	is(released('people_by_device'), expected(1), "$what: each key's persons counted once");
	return;
}

# A wave of persons from base, each person's rows in one statement: keys
# from aa (not declared, first in key order) and the declared ones, 1 to 6
# rows a person.
sub wave
{
	my ($node, $base, $persons, $user) = @_;
	$node->safe_psql('postgres', qq{
		INSERT INTO events (user_id, device)
		SELECT $base + p, (ARRAY['aa', 'phone', 'tv', 'web', NULL])[1 + (p * 7 + r * 3) % 5]
		FROM generate_series(1, $persons) p, generate_series(1, 1 + p % 6) r},
		extra_params => [ '-U', $user // 'app' ]);
	return;
}

wave($shards[0], 0, 200);
wave($shards[1], 1000, 200);
counted_once('rows inserted on the shards');
like(released('by_device'), qr/phone=[1-9].*tv=[1-9].*web=[1-9]/, 'every key has rows');
# a person whose undeclared key comes first keeps both declared keys
$shards[0]->safe_psql('postgres',
	"INSERT INTO events (user_id, device) VALUES (5000, 'aa'), (5000, 'phone'), (5000, 'tv')",
	extra_params => [ '-U', 'app' ]);
my $before = released('by_device');
counted_once('a person with an undeclared key first');
my ($phone0, $tv0) = $before =~ /phone=(\d+),tv=(\d+)/;
like(released('by_device'), qr/phone=@{[$phone0 + 1]},tv=@{[$tv0 + 1]},/,
	'an undeclared key takes none of the max_groups keys');
wave($coord, 2000, 100, 'postgres');
counted_once('rows inserted through the coordinator');

# A step of the coordinator held inside shard 1's seal (ContcountTest.pm).
sub step_held_on_shard
{
	my ($person) = @_;
	return step_held_in_seal($shards[0], $coord, 'by_device', "INSERT INTO events VALUES ($person, now(), 'tv')", \&tick);
}

# kill -9 of the coordinator while its step waits inside a shard's seal
my ($locker, $pending_tick) = step_held_on_shard(30000);
$before = released('by_device');
kill9_postmaster_and_start($coord);
$pending_tick->finish;
$locker->query_safe('COMMIT');
$locker->quit;
ok($shards[0]->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE query LIKE '%shard_feed_take%' AND pid <> pg_backend_pid()"),
	"the shard's side of the killed step ends");
wait_for_step_worker($coord);
is(released('by_device'), $before, 'the killed step released nothing');
counted_once('kill -9 of the coordinator mid-step');

# a shard stopped for a few steps: delayed, then counted once
wave($shards[1], 60000, 50);
$shards[1]->stop;
wave($shards[0], 61000, 50);
tick() for 1 .. 3;
like(delayed(), qr/shard2/, 'contcount.counter_shards: shard 2 is delayed');
$shards[1]->start;
counted_once('a shard back after a few steps');

cmp_ok($doubt, '<', 1e-6, 'the chance that any compared release was not exact is below 1e-6');

# per-block budgets are not fed by shards: refused (0A000)
$coord->safe_psql('postgres', "SELECT contcount.drop_counter(c) FROM unnest(ARRAY['by_device', "
	  . "'people_by_device']) c", extra_params => [ '-U', 'analyst' ]);
$coord->safe_psql('postgres', "SELECT contcount.source_blocks('events', '1 day', 1000, '30 days')");
my ($ret, $out, $err) = $coord->psql('postgres',
	"\\set VERBOSITY verbose\nSELECT contcount.create_counter('blocked', 1000, horizon => 10, "
	  . "source => 'events', dimension => 'device')",
	extra_params => [ '-U', 'analyst' ]);
like($err, qr/ERROR:  0A000: a counter over sharded source "events" has no blocks/,
	'a counter over a sharded source with per-block budgets is refused (0A000)');
done_testing();
