# Counters fed by many servers: a coordinator whose source table is
# hash-partitioned by the unit, its three partitions postgres_fdw foreign
# tables on two shards that run contcount (two on the first); applications insert on the
# shards (as a role that is not a superuser), each shard's trigger logs the
# rows, the coordinator's step collects the shards' sealed batches.
# - every committed row of every shard is counted once, within its
#   person's bound: the counter's exact released count (counter_internals)
#   equals the sum over persons of min(max_rows, rows), under load and
#   after every step that could read both shards;
# - rows inserted through the coordinator count once (on their shard);
# - a batch sealed on a shard whose reading the coordinator never
#   committed is read again by the next step, once;
# - kill -9 of the coordinator while a step is waiting inside a shard's
#   seal, and a connection to a shard lost there: a later step counts the
#   rows, once;
# - kill -9 of the coordinator and of a shard under load: the same;
# - a shard stopped for a few steps: contcount.counter_shards says it is
#   delayed, its counts arrive once it is back, none lost, none doubled;
# - on a shard, a role that is not the coordinator's connection user
#   cannot read the exact counts (42501), and no PUBLIC right reads them.
# Counters over a dimension of a sharded source: 025_shard_key_counters.pl.
use strict;
use warnings;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use ContcountTest;

my $max_rows = 5;
my $take = 'contcount.shard_feed_take(text, text, text, text, integer, bigint, text, text[], '
  . 'integer, boolean)';

my @shards;
for my $name ('feed1', 'feed2')
{
	my $shard = start_contcount_node($name, "restart_after_crash = on");
	$shard->safe_psql('postgres', qq{
		CREATE EXTENSION contcount;
		CREATE ROLE coord LOGIN;
		CREATE ROLE app LOGIN;
		CREATE ROLE snoop LOGIN;
		CREATE TABLE events (user_id int, at timestamptz DEFAULT now(), device text);
		CREATE TABLE events_more (user_id int, at timestamptz DEFAULT now(), device text);
		GRANT SELECT, INSERT ON events, events_more TO coord, app;
		GRANT SELECT ON events TO snoop;
		GRANT EXECUTE ON FUNCTION $take TO coord;
		SELECT contcount.feed_shard('events', 'user_id');
		SELECT contcount.feed_shard('events_more', 'user_id');
	});
	push @shards, $shard;
}

my $coord = start_contcount_node('feed_coordinator', "contcount.database = 'postgres'\nrestart_after_crash = on");
my $servers = foreign_partitions_sql(\@shards, 3);
# shard 1 holds a second partition, a table and a feed of its own
$servers .= q{
	CREATE FOREIGN TABLE events_2 PARTITION OF events
	  FOR VALUES WITH (MODULUS 3, REMAINDER 2) SERVER shard1 OPTIONS (table_name 'events_more');
};
$coord->safe_psql('postgres', qq{
	CREATE EXTENSION postgres_fdw;
	CREATE EXTENSION contcount;
	CREATE TABLE events (user_id int, at timestamptz DEFAULT now(), device text)
	  PARTITION BY HASH (user_id);
	$servers
	SELECT contcount.create_ledger('data', 1000000);
	SELECT contcount.create_ledger('team', 1000000);
	SELECT contcount.protect_table('events', 'events', 'user_id', 'at', 'data', $max_rows);
	SELECT contcount.source_dimension('events', 'device', ARRAY['phone', 'tv']);
	CREATE ROLE analyst LOGIN;
	CREATE ROLE other LOGIN;
	ALTER ROLE analyst SET contcount.ledger = 'team';
	SELECT contcount.grant_source('events', 'analyst');
});
$coord->safe_psql('postgres', q{
	SELECT contcount.create_counter('feed', 1000, horizon => 100000, step => '1 day',
	    source => 'events', mechanism => 'binary');
	SELECT contcount.create_counter('people', 1000, horizon => 100000, step => '1 day',
	    source => 'events', mechanism => 'binary', count => 'persons');
}, extra_params => [ '-U', 'analyst' ]);
wait_for_step_worker($coord);
# the worker opens the counter's feed on each shard as soon as it sees it
for my $i (0, 1)
{
	ok($shards[$i]->poll_query_until('postgres',
			'SELECT count(*) = ' . 2 * (2 - $i) . ' FROM contcount.shard_feed'),
		$shards[$i]->name . ": the counters' feeds are open, one a partition and counter");
}

# A query's output, or its error with its SQLSTATE.
sub query
{
	my ($node, $sql, $user) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\n$sql",
		extra_params => [ '-U', $user // 'postgres' ]);
	return $ret == 0 ? $out : "failed: $err";
}

sub tick
{
	return $coord->safe_psql('postgres', "SELECT contcount.tick('feed')",
		extra_params => [ '-U', 'analyst' ]);
}

# Each shard's rows per person, bounded: what the counter must count.
sub expected
{
	my $sum = 0;
	for my $shard (@shards)
	{
		for my $table ('events', 'events_more')
		{
			$sum += $shard->safe_psql('postgres',
				"SELECT coalesce(sum(least(n, $max_rows)), 0) FROM "
				  . "(SELECT count(*) AS n FROM $table WHERE user_id IS NOT NULL GROUP BY user_id) p");
		}
	}
	return $sum;
}

sub released
{
	return $coord->safe_psql('postgres',
		"SELECT exact_released FROM contcount.counter_internals('feed')");
}

sub delayed
{
	return $coord->safe_psql('postgres',
		"SELECT string_agg(DISTINCT server, ',' ORDER BY server) FROM contcount.counter_shards WHERE delayed");
}

# Ticks until a step read both shards, then: all rows counted once?
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
	is(released(), expected(), "$what: every shard's row counted once, within its person's bound");
	return;
}

# A load of inserts on a shard, as the application role: persons of a
# range of its own, single rows and batches, a quarter rolled back.
sub load
{
	my ($shard, $base, $seconds) = @_;
	my $script = $shard->basedir . '/inserts.sql';
	open(my $fh, '>', $script) or die;
	print $fh qq{
\\set rows random(1, 8)
\\set abort random(0, 3)
BEGIN;
INSERT INTO events (user_id) SELECT $base + (random() * 2000)::int FROM generate_series(1, :rows);
\\if :abort = 0
ROLLBACK;
\\else
COMMIT;
\\endif
};
	close $fh;
	my ($out, $err) = ('', '');
	return IPC::Run::start(
		[ 'pgbench', '--no-vacuum', '--client=2', "--time=$seconds", '--file', $script,
		  '-U', 'app', '-h', $shard->host, '-p', $shard->port, 'postgres' ],
		'>', \$out, '2>', \$err);
}

# rows of the application on both shards, and some through the coordinator
$shards[0]->safe_psql('postgres',
	'INSERT INTO events (user_id) SELECT u % 50 FROM generate_series(1, 400) u',
	extra_params => [ '-U', 'app' ]);
$shards[1]->safe_psql('postgres',
	'INSERT INTO events (user_id) SELECT 1000 + u % 70 FROM generate_series(1, 300) u',
	extra_params => [ '-U', 'app' ]);
counted_once('rows inserted on the shards');
cmp_ok(released(), '>', 0, 'the shards fed the counter');
# shard 1: 50 persons of 8 rows, 5 each; shard 2: 70 persons of 4 or 5
is(released(), 50 * $max_rows + 300, 'the bound holds each person on their shard');
$coord->safe_psql('postgres',
	"INSERT INTO events (user_id) SELECT 5000 + u % 40 FROM generate_series(1, 120) u");
counted_once('rows inserted through the coordinator');
is($shards[0]->safe_psql('postgres', 'SELECT count(*) > 0 FROM events_more'), 't',
	"some of them in shard 1's second partition, counted by its own feed");

# under load on both shards
my @loads = (load($shards[0], 10000, 4), load($shards[1], 20000, 4));
for (1 .. 6)
{
	usleep(500_000);
	tick();
}
$_->finish for @loads;
counted_once('under load on both shards');

# a batch that the shard sealed and committed but whose reading the
# coordinator never committed (its crash between the two commits): asked
# again with the same watermark, the shard answers it again, and the next
# step counts it, once
$shards[0]->safe_psql('postgres', 'INSERT INTO events (user_id) SELECT 29000 + u FROM generate_series(1, 7) u');
my $feed_id = $coord->safe_psql('postgres', "SELECT id FROM contcount.counter WHERE name = 'feed'");
my $feed = $shards[0]->safe_psql('postgres',
	"SELECT name FROM contcount.shard_feed WHERE relid = 'events'::regclass AND name LIKE '%:$feed_id:%'");
my $mark = $coord->safe_psql('postgres',
	"SELECT read_upto FROM contcount.counter_shard WHERE partition = 'events_0'::regclass "
	  . "AND counter_id = $feed_id");
my $sealed = "SELECT (contcount.shard_feed_take('$feed', 'public', 'events', 'user_id', $max_rows, $mark)).rows";
is(query($shards[0], $sealed, 'coord'), '7', 'a batch sealed on the shard, its reading not recorded');
is(query($shards[0], $sealed, 'coord'), '7', 'the shard answers it again to the same watermark');
my $before = released();
counted_once('a batch sealed and not recorded');
is(released(), $before + 7, 'the next step counted it once');

# A step of the coordinator held inside shard 1's seal (ContcountTest.pm).
sub step_held_on_shard
{
	my ($person) = @_;
	return step_held_in_seal($shards[0], $coord, 'feed', "INSERT INTO events (user_id) VALUES ($person)", \&tick);
}

# kill -9 of the coordinator while its step waits inside a shard's seal,
# which then loses its client: the seal rolls back, a later step seals again
my ($locker, $pending_tick) = step_held_on_shard(30000);
$before = released();
kill9_postmaster_and_start($coord);
$pending_tick->finish;
$locker->query_safe('COMMIT');
$locker->quit;
ok($shards[0]->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE query LIKE '%shard_feed_take%' AND pid <> pg_backend_pid()"),
	"the shard's side of the killed step ends");
wait_for_step_worker($coord);
is(released(), $before, 'the killed step released nothing');
counted_once('kill -9 of the coordinator mid-step');

# the connection to a shard lost while the step waits inside its seal: the
# step goes on without that shard, whose rows a later step counts, once
($locker, $pending_tick) = step_held_on_shard(30001);
$shards[0]->safe_psql('postgres', "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
	  . "WHERE query LIKE '%shard_feed_take%' AND wait_event_type = 'Lock'");
$pending_tick->finish;
is(delayed(), 'shard1', 'a lost connection delays the shard');
$locker->query_safe('COMMIT');
$locker->quit;
counted_once('a connection lost mid-step');

# kill -9 of the coordinator, then of a shard, under load
for my $node ($coord, $shards[1])
{
	@loads = (load($shards[0], 40000, 4), load($shards[1], 50000, 4));
	for (1 .. 3)
	{
		usleep(400_000);
		tick();
	}
	kill9_postmaster_and_start($node);
	$_->finish for @loads;
	wait_for_step_worker($coord);
	counted_once('kill -9 of ' . $node->name . ' under load');
}

# a shard stopped for a few steps: delayed, then counted once
$shards[1]->safe_psql('postgres', 'INSERT INTO events (user_id) SELECT 60000 + u % 30 FROM generate_series(1, 90) u');
$shards[1]->stop;
$shards[0]->safe_psql('postgres', 'INSERT INTO events (user_id) SELECT 61000 + u FROM generate_series(1, 10) u');
$before = released();
tick() for 1 .. 3;
is(delayed(), 'shard2', 'contcount.counter_shards: shard 2 is delayed');
like($coord->safe_psql('postgres', "SELECT error FROM contcount.counter_shards WHERE server = 'shard2'",
		extra_params => [ '-U', 'analyst' ]),
	qr/could not connect to shard "shard2"/, 'and says why, to the counter\'s owner');
is(released(), $before + 10, "the steps counted shard 1's rows and none of shard 2's");
is(query($coord, 'SELECT count(*) FROM contcount.counter_shards', 'other'), "0",
	'a role that cannot read the counter sees none of its shards');
$shards[1]->start;
counted_once('a shard back after a few steps');
is(released(), $before + 10 + 90, "shard 2's rows arrived, once");

# A counter of distinct persons over the same shards: each person once,
# however many rows, and whichever steps read them.
my $people_read = "SELECT count(*) FILTER (WHERE NOT delayed) = 3 FROM contcount.counter_shards "
  . "WHERE counter = 'people'";
for (1 .. 30)
{
	$coord->safe_psql('postgres', "SELECT contcount.tick('people')", extra_params => [ '-U', 'analyst' ]);
	last if $coord->safe_psql('postgres', $people_read) eq 't';
	sleep 1;
}
my $persons = 0;
$persons += $_->safe_psql('postgres',
	'SELECT count(DISTINCT user_id) FROM (SELECT user_id FROM events UNION ALL SELECT user_id FROM events_more) e')
  for @shards;
is($coord->safe_psql('postgres', "SELECT exact_released FROM contcount.counter_internals('people')"),
	$persons, 'a counter of persons over the shards counts each person once');

# rights on a shard: exact counts for the coordinator's user only
my $ask = "SELECT contcount.shard_feed_take('x', 'public', 'events', 'user_id', 5, 0)";
like(query($shards[0], $ask, 'snoop'), qr/ERROR:  42501: permission denied for function shard_feed_take/,
	'shard: a role with SELECT on the table but no EXECUTE is refused (42501)');
$shards[0]->safe_psql('postgres', "GRANT EXECUTE ON FUNCTION $take TO snoop; REVOKE SELECT ON events FROM snoop");
like(query($shards[0], $ask, 'snoop'), qr/ERROR:  42501: permission denied for the bounded counts/,
	'shard: a role with EXECUTE but no SELECT on the table is refused (42501)');
like(query($shards[0], 'SELECT count(*) FROM contcount.shard_feed_batch', 'app'),
	qr/ERROR:  42501/, "shard: the application's role cannot read the sealed batches");
like(query($shards[0], $ask, 'coord'), qr/^\(\d+,\d+,,\)$/, "shard: the coordinator's user is answered");

done_testing();
