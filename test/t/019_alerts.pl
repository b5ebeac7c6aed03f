# Alerts over released values reach a client that listens: a role that is
# not a superuser, allowed to read a counter, LISTENs on the channel of its
# alert and hears, for each step whose released value (as history() shows
# it) crosses the threshold upwards, one notification whose payload is that
# step and that released value, and nothing for the other steps; a channel
# whose threshold is never reached stays silent.  A sparse vector alert on
# the same counter sends one notification, at the step whose exact window
# count first passes its threshold (far from its noise), with no count in
# it, then stops.  A step whose commit waits (for a synchronous standby)
# is heard of only once committed, when history() shows it too.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ContcountTest;
use Time::HiRes qw(usleep);

my $node = PostgreSQL::Test::Cluster->new('alerts');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'contcount'
contcount.database = 'postgres'
});
$node->start;

$node->safe_psql('postgres', q{
	CREATE EXTENSION contcount;
	SELECT contcount.create_ledger('app', 100);
	SET contcount.ledger = 'app';
	SELECT contcount.create_counter('signups', 1, mechanism => 'binary', horizon => 100,
		step => '1 day');
	CREATE TABLE signups (n int);
	SELECT contcount.attach_counter('signups', 'signups');
	CREATE ROLE regress_listener LOGIN;
	SELECT contcount.grant_counter('signups', 'regress_listener');
});
my @listener = (extra_params => [ '-U', 'regress_listener' ]);
my $threshold = 40;
$node->safe_psql('postgres', qq{
	SELECT contcount.create_alert('signups', $threshold);
	SELECT contcount.create_alert('signups', 1e9, channel => 'never');
}, @listener);

$node->safe_psql('postgres', q{
	SELECT contcount.create_sparse_alert('signups', 20, 2, 50, channel => 'sparse', ledger => 'app');
});

my $s = $node->background_psql('postgres', @listener);
$s->query_safe('LISTEN contcount_alert; LISTEN never; LISTEN sparse');

# Counts that go up by 15 a step, then stay: the released values cross 40
# at least once, and may go back below it and cross again.
for my $step (1 .. 8)
{
	$node->safe_psql('postgres',
		'INSERT INTO signups SELECT 1 FROM generate_series(1, 15)') if $step <= 5;
	$node->safe_psql('postgres', q{SELECT contcount.tick('signups')});
}

# What the listener may read: the released values, and the steps where they
# cross the threshold upwards.
my @released = map { [ split /\|/ ] } split /\n/,
  $node->safe_psql('postgres', 'SELECT t, noisy_count FROM contcount.history(\'signups\') ORDER BY t',
	@listener);
is(scalar @released, 8, 'eight steps released');
my @expected;
for my $i (0 .. $#released)
{
	push @expected, "$released[$i][0]:$released[$i][1]"
	  if $released[$i][1] >= $threshold && ($i == 0 || $released[$i - 1][1] < $threshold);
}
ok(@expected >= 1, 'the released values cross the threshold');

my @heard = notifications_heard($s, @expected + 1);
$s->quit;

is(scalar(grep { $_->[0] eq 'never' } @heard), 0, 'a threshold never reached sends nothing');
my @sparse = map { $_->[1] } grep { $_->[0] eq 'sparse' } @heard;
is_deeply(
	\@sparse,
	[
		'{"alert" : 3, "counter" : "signups", "key" : null, "kind" : "sparse_vector", "step" : 2, "window_steps" : 2, "threshold" : 20, "positives" : 1, "max_positives" : 1}'
	],
	'the sparse vector alert answers once, where the window count (15, 30) passes 20, with no count'
);
my @payloads = map { $_->[1] } grep { $_->[0] eq 'contcount_alert' } @heard;
my @got;
for (@payloads)
{
	like($_,
		qr/^\{"alert" : \d+, "counter" : "signups", "key" : null, "step" : \d+, "value" : -?\d+, "threshold" : $threshold\}$/,
		'the payload names the counter, no key, the step, the released value, the threshold');
	push @got, "$1:$2" if /"step" : (\d+), "value" : (-?\d+)/;
}
is_deeply(\@got, \@expected,
	'one notification for each step whose released value crosses the threshold, with that value')
  or diag('released: ' . join(' ', map { "$_->[0]:$_->[1]" } @released));

# Heard only once committed: a step whose commit waits (for a synchronous
# standby that does not exist) has stored its release and sent its NOTIFY
# in its transaction, yet the listener hears nothing and history() shows
# nothing of it; once the commit completes, both.
$node->safe_psql('postgres', q{
	SELECT contcount.create_counter('held', 1, mechanism => 'binary', horizon => 100,
		step => '1 day', ledger => 'app');
	SELECT contcount.grant_counter('held', 'regress_listener');
});
$node->safe_psql('postgres',
	q{SELECT contcount.create_alert('held', -1000, channel => 'held')}, @listener);
$s = $node->background_psql('postgres', @listener);
$s->query_safe('LISTEN held');
$node->safe_psql('postgres', q{ALTER SYSTEM SET synchronous_standby_names = 'nobody'});
$node->reload;
# the checkpointer reads it on its own time: then every commit waits
$node->poll_query_until('postgres', q{SHOW synchronous_standby_names}, 'nobody')
  or die 'the setting is not reloaded';
sleep(2);
my ($in, $tick_out, $tick_err) = ('', '', '');
my $ticker = IPC::Run::start(
	[ 'psql', '-X', '-A', '-t', '-d', $node->connstr('postgres'), '-c', q{SELECT contcount.tick('held')} ],
	\$in, \$tick_out, \$tick_err);
$node->poll_query_until('postgres',
	q{SELECT count(*) > 0 FROM pg_stat_activity WHERE backend_type = 'contcount step worker' AND wait_event = 'SyncRep'})
  or do { $ticker->finish; die "the step does not wait for its commit: $tick_out $tick_err" };
usleep(500_000);
my $held = $s->query_safe(q{SELECT count(*) FROM contcount.history('held')});
is($held, '0', 'a step waiting for its commit shows no release');
$held = $s->query_safe('SELECT 1');
unlike($held, qr/Asynchronous notification "held"/, 'and its NOTIFY is not heard');
$node->safe_psql('postgres', q{ALTER SYSTEM RESET synchronous_standby_names});
$node->reload;
$ticker->finish;
my @held_heard = map { $_->[1] } notifications_heard($s, 1);
$s->quit;
my $held_release = $node->safe_psql('postgres',
	q{SELECT t || ':' || noisy_count FROM contcount.history('held')}, @listener);
is(scalar(@held_heard), 1, 'once committed, the notification is heard');
like($held_heard[0] // '', qr/"step" : 1, "value" : -?\d+/, 'for step 1');
my ($held_value) = ($held_heard[0] // '') =~ /"value" : (-?\d+)/;
is("1:" . ($held_value // ''), $held_release, 'with the value history() now shows');

# The alert records its last crossing, as the listener sees in the view.
is( $node->safe_psql('postgres',
		q{SELECT fired_step || ':' || fired_value FROM contcount.alerts WHERE channel = 'contcount_alert'},
		@listener),
	$expected[-1],
	'the view shows the last crossing');

done_testing();
