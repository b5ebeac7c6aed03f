# The ledger under automatic failover, with pg_auto_failover (Debian packages
# pg-auto-failover-cli and postgresql-15-auto-failover): a monitor, a primary
# and a synchronous secondary (replication quorum, synchronous_standby_names
# 'ANY 1 (...)' set by pg_autoctl), contcount preloaded on both nodes.
# Clients release values without pause, charged to one ledger (noisy_count
# and running_counts; in autocommit, with synchronous_commit = off, and inside
# a transaction with synchronous_commit = local that rolls back after the
# value is shown), each recording what it received, and read a counter's
# latest step.  Then the secondary's WAL receiver is frozen (releases wait
# for it, wait event SyncRep), the primary is killed with everything it runs
# (kill -9 of its pg_autoctl and its postmaster), and the frozen receiver is
# killed too, so that WAL the standby had not read is lost as in a network
# partition.  pg_auto_failover promotes the secondary; on it:
# - every value a client received has its charge (found by the comment in
#   its statement), and the ledger's spending covers them all;
# - the counter goes on from its last committed step: every step a client
#   saw has the value it saw, none is skipped or taken twice, and the step
#   worker waits while pg_auto_failover holds the promoted node read-only
#   (default_transaction_read_only) rather than fail and restart 10 s later;
# - releases go on.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use File::Spec;
use IPC::Run;
use POSIX ();
use Time::HiRes qw(usleep time);

my ($pg_autoctl) = grep { -x } map { File::Spec->catfile($_, 'pg_autoctl') } File::Spec->path;
plan skip_all => 'pg_autoctl is not installed (Debian package pg-auto-failover-cli)'
  unless defined $pg_autoctl;

my $dir = PostgreSQL::Test::Utils::tempdir;
my $sock = PostgreSQL::Test::Utils::tempdir_short;
my $bindir = `pg_config --bindir`;
chomp $bindir;
# pg_autoctl keeps its state under these, not in the server user's home
$ENV{XDG_CONFIG_HOME} = "$dir/config";
$ENV{XDG_DATA_HOME} = "$dir/data";
$ENV{XDG_RUNTIME_DIR} = "$dir/run";
# pg_autoctl connects to a server it has not started yet through PGHOST:
# over TCP (the default socket directory may not exist)
$ENV{PGHOST} = 'localhost';
delete $ENV{PGPORT};

my %port = map { $_ => PostgreSQL::Test::Cluster::get_free_port() } qw(monitor node1 node2);
my $monitor_uri = "postgres://autoctl_node\@localhost:$port{monitor}/pg_auto_failover";
# what an application connects with: whichever node takes writes
my $app_uri = "postgres://analyst\@localhost:$port{node1},localhost:$port{node2}/postgres"
  . '?target_session_attrs=read-write&connect_timeout=2';
my %service;	# name => pid of its pg_autoctl run, leader of its process group
my @clients;	# the clients' harnesses; they stop once $stop exists
my $stop = "$dir/stop";

# psql on one node, as a role (postgres unless named): (ok, output, error)
sub psql_on
{
	my ($node, $sql, $user) = @_;
	my ($out, $err) = ('', '');
	my $ok = IPC::Run::run(
		[
			'psql', '-X', '-A', '-t', '-q', '-v', 'ON_ERROR_STOP=1',
			'-h', 'localhost', '-p', $port{$node},
			'-U', $user // 'postgres', '-d', $node eq 'monitor' ? 'pg_auto_failover' : 'postgres',
			'-c', $sql
		],
		'<', \undef, '>', \$out, '2>', \$err,
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	chomp $out;
	return ($ok, $out, $err);
}

sub safe_psql_on
{
	my ($node, $sql, $user) = @_;
	my ($ok, $out, $err) = psql_on($node, $sql, $user);
	die "psql on $node failed: $err\n($sql)" unless $ok;
	return $out;
}

# Poll a query until it returns t (a query that fails counts as not yet).
sub poll_until
{
	my ($node, $sql, $what, $seconds) = @_;
	my $deadline = time + ($seconds // $PostgreSQL::Test::Utils::timeout_default);
	my ($ok, $out, $err);
	while (time < $deadline)
	{
		($ok, $out, $err) = psql_on($node, $sql);
		return 1 if $ok && $out eq 't';
		usleep(100_000);
	}
	diag("timed out waiting until $what: $out$err");
	return 0;
}

# A data directory with contcount's settings, as a DBA would write them:
# below the include line pg_autoctl puts at the top of postgresql.conf, so
# that they win over its shared_preload_libraries (pg_stat_statements).
sub init_data
{
	my ($name, $conf) = @_;
	run_log([ 'initdb', '-D', "$dir/$name", '-A', 'trust', '-N' ]) or die "initdb $name";
	# (the server's log goes to $dir/$name/startup.log, where pg_autoctl starts it)
	append_to_file("$dir/$name/postgresql.conf",
		"unix_socket_directories = '$sock'\nlogging_collector = off\n$conf");
	return;
}

# pg_autoctl run for one node, in a process group of its own (kill -9 of
# the group is the machine failing: the keeper, the postmaster, its backends).
sub start_service
{
	my ($name) = @_;
	my $pid = fork() // die "fork: $!";
	if ($pid == 0)
	{
		POSIX::setsid();
		open(STDOUT, '>>', "$dir/$name.log") or POSIX::_exit(127);
		open(STDERR, '>&', \*STDOUT) or POSIX::_exit(127);
		exec($pg_autoctl, 'run', '--pgdata', "$dir/$name") or POSIX::_exit(127);
	}
	$service{$name} = $pid;
	return;
}

sub kill_service
{
	my ($name, $signal) = @_;
	my $pid = delete $service{$name} or return;
	kill $signal, -$pid;
	waitpid($pid, 0);
	return;
}

END
{
	if (@clients)
	{
		append_to_file($stop, '') unless -e $stop;
		$_->kill_kill for @clients;
	}
	# pg_autoctl stops its postgres on SIGTERM; whatever is left, kill -9
	for my $name (keys %service)
	{
		my $pid = $service{$name};
		kill 'TERM', -$pid;
		for (1 .. 100) { last if waitpid($pid, POSIX::WNOHANG()) != 0; usleep(100_000); }
		kill 'KILL', -$pid;
	}
}

sub node_state
{
	my ($name) = @_;
	return "(SELECT reportedstate::text FROM pgautofailover.node WHERE nodename = '$name')";
}

sub autoctl_create
{
	my ($name, @args) = @_;
	run_log(
		[
			$pg_autoctl, 'create', @args, '--pgdata', "$dir/$name",
			'--pgport', $port{$name}, '--hostname', 'localhost', '--auth', 'trust',
			'--no-ssl', '--pgctl', "$bindir/pg_ctl"
		]) or die "pg_autoctl create $name failed";
	start_service($name);
	return;
}

# ---------------------------------------------------------------------
# The monitor (failing over within seconds), a primary, a secondary.
# ---------------------------------------------------------------------
init_data('monitor', q{
pgautofailover.health_check_period = 1000
pgautofailover.health_check_timeout = 1000
pgautofailover.health_check_max_retries = 1
pgautofailover.health_check_retry_delay = 500
pgautofailover.node_considered_unhealthy_timeout = 3000
pgautofailover.primary_demote_timeout = 3000
});
autoctl_create('monitor', 'monitor');
poll_until('monitor', 'SELECT true', 'the monitor runs') or die;

my $contcount_conf = q{
shared_preload_libraries = 'contcount, pg_stat_statements'
contcount.database = 'postgres'
};
init_data('node1', $contcount_conf);
autoctl_create('node1', 'postgres', '--name', 'node1', '--monitor', $monitor_uri);
poll_until('monitor', 'SELECT ' . node_state('node1') . " = 'single'", 'node1 runs as a single node')
  or die;
# (the secondary is a base backup of the primary: it has contcount's settings)
autoctl_create('node2', 'postgres', '--name', 'node2', '--monitor', $monitor_uri);
poll_until('monitor', 'SELECT ' . node_state('node2') . " = 'secondary' AND " . node_state('node1') . " = 'primary'",
	'node1 is primary and node2 secondary')
  or die;
ok( poll_until(
		'node1',
		q{SELECT current_setting('synchronous_standby_names') LIKE 'ANY 1 (%' AND }
		  . q{EXISTS (SELECT FROM pg_stat_replication WHERE sync_state = 'quorum')},
		'the secondary is synchronous'),
	'pg_auto_failover makes the secondary synchronous (ANY 1, replication quorum)');

safe_psql_on('node1', q{
	CREATE EXTENSION contcount;
	SELECT contcount.create_ledger('load', 1000);
	CREATE ROLE analyst LOGIN;
	CREATE TABLE events AS SELECT i FROM generate_series(1, 100) i;
	GRANT SELECT ON events TO analyst;
	SELECT contcount.grant_ledger('load', 'analyst');
});
safe_psql_on('node1', q{SELECT contcount.create_counter('ticker', 1, mechanism => 'hybrid',
	step => '1 second', ledger => 'load')}, 'analyst');

# ---------------------------------------------------------------------
# Clients: each releases without pause and records what it received (and
# the counter's latest step), reconnecting to whichever node takes writes.
# ---------------------------------------------------------------------
my $client = "$dir/client.sh";
append_to_file($client, <<'EOF');
#!/usr/bin/env bash
# client id, connection URI, file of received values, file that stops it
id=$1 uri=$2 out=$3 stop=$4
i=0
step="SELECT 'c', t, noisy_count FROM contcount.current('ticker')"
while [ ! -e "$stop" ]; do
	i=$((i + 1))
	tag="load $id-$i"
	noisy="SELECT 'v', contcount.noisy_count(0.001, 'load') FROM events /* $tag */"
	case $((i % 3)) in
	0) sql=(-c "$noisy" -c "$step") ;;
	1) sql=(-c "SET synchronous_commit = off" -c "SELECT 'v', string_agg(noisy_count::text, ',') FROM contcount.running_counts(ARRAY[1, 2, 3], 0.001, ledger => 'load', mechanism => 'binary') /* $tag */") ;;
	2) sql=(-c "BEGIN" -c "SET LOCAL synchronous_commit = local" -c "$noisy" -c "SELECT pg_sleep(0.05)" -c "ROLLBACK") ;;
	esac
	# what psql printed was received, whatever happens to the session after
	got=$(psql -X -A -t -q -v ON_ERROR_STOP=1 -d "$uri" "${sql[@]}" 2>/dev/null)
	grep -E '^[vc]\|' <<<"$got" | sed "s/^/$tag|/" >>"$out"
	grep -q '^v|' <<<"$got" || sleep 0.1
done
EOF
chmod 0755, $client;
my $received = "$dir/received";
append_to_file($received, '');
@clients = map { IPC::Run::start([ $client, $_, $app_uri, $received, $stop ]) } (1, 2);

# values received (tag => value) and counter steps seen (t => value)
sub read_received
{
	my (%values, %steps);
	for my $line (split /\n/, slurp_file($received))
	{
		my ($tag, $kind, @rest) = split /\|/, $line;
		$values{$tag} = $rest[0] if $kind eq 'v';
		$steps{ $rest[0] } = $rest[1] if $kind eq 'c' && $rest[0] ne '';
	}
	return (\%values, \%steps);
}

sub wait_for_values
{
	my ($values, $steps, $what) = @_;
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	while (time < $deadline)
	{
		my ($v, $s) = read_received();
		return 1 if keys %$v >= $values && keys %$s >= $steps;
		usleep(200_000);
	}
	diag("timed out waiting for $what");
	return 0;
}

ok(wait_for_values(30, 2, 'values before the failover'),
	'clients receive values and counter steps from the primary');

# ---------------------------------------------------------------------
# Freeze the secondary's WAL receiver: releases wait, showing nothing.
# Kill the primary, then the frozen receiver (the secondary restarts from
# what it flushed; what it had not read is lost).
# ---------------------------------------------------------------------
my $walreceiver = safe_psql_on('node2', 'SELECT pid FROM pg_stat_wal_receiver');
kill 'STOP', $walreceiver or die "cannot stop the WAL receiver $walreceiver";
ok( poll_until('node1',
		q{SELECT count(*) >= 2 FROM pg_stat_activity WHERE wait_event = 'SyncRep' AND usename = 'analyst'},
		'releases wait for the secondary', 30),
	'with the secondary frozen, the clients\' releases wait for it (wait event SyncRep)');
usleep(300_000);
my ($before_kill) = read_received();
my $killed_at = time;
kill_service('node1', 'KILL');
kill 'KILL', $walreceiver;
ok( poll_until(
		'node2',
		q{SELECT NOT pg_is_in_recovery() AND NOT current_setting('default_transaction_read_only')::bool},
		'node2 is promoted and takes writes', 120),
	'pg_auto_failover promotes the secondary');
note(sprintf('the secondary took writes %.1f s after the kill', time - $killed_at));

my $n_before = keys %$before_kill;
ok(wait_for_values($n_before + 30, 0, 'values after the failover'),
	'clients go on receiving values from the promoted node');
append_to_file($stop, '');
$_->finish for @clients;
my ($values, $steps) = read_received();

# ---------------------------------------------------------------------
# The promoted node holds a charge for every value a client received.
# ---------------------------------------------------------------------
my %charged;
for (split /\n/, safe_psql_on('node2', q{SELECT statement FROM contcount.charges WHERE ledger = 'load'}))
{
	$charged{$1}++ while m{/\* (load \d+-\d+) \*/}g;
}
my @missing = grep { !$charged{$_} } sort keys %$values;
is(scalar(@missing), 0, sprintf('promoted node: every one of the %d values received has its charge', scalar keys %$values))
  or diag('received without a charge (the first 20): ' . join(', ', @missing[ 0 .. ($#missing < 19 ? $#missing : 19) ]));
cmp_ok(scalar(keys %charged), '>=', scalar(keys %$values),
	'promoted node: at least as many charges as values received');
is( safe_psql_on(
		'node2',
		sprintf(q{SELECT spent >= %d * 0.001 + 1 FROM contcount.ledgers WHERE name = 'load'},
			scalar keys %$values)),
	't',
	'promoted node: the ledger spent at least what was received (and the counter)');

# ---------------------------------------------------------------------
# The counter goes on from its last committed step.
# ---------------------------------------------------------------------
my $last_seen = (sort { $b <=> $a } keys %$steps)[0];
ok( poll_until('node2',
		"SELECT steps >= $last_seen + 3 FROM contcount.counters WHERE name = 'ticker'",
		'the counter steps on the promoted node'),
	'promoted node: the step worker steps the counter on');
my %history = map { split /\|/ } split /\n/,
  safe_psql_on('node2', q{SELECT t, noisy_count FROM contcount.history('ticker')});
my @changed = grep { ($history{$_} // 'none') ne $steps->{$_} } sort { $a <=> $b } keys %$steps;
is(scalar(@changed), 0,
	sprintf('promoted node: each of the %d steps clients saw kept its value', scalar keys %$steps))
  or diag(join(', ', map { "step $_: saw $steps->{$_}, now " . ($history{$_} // 'none') } @changed));
is( safe_psql_on('node2', q{SELECT count(*) = max(t) AND min(t) = 1 FROM contcount.history('ticker')}),
	't', 'promoted node: no step skipped or taken twice');

my @log = split /\n/, slurp_file("$dir/node2/startup.log");
ok( (grep { /contcount step worker waiting: default_transaction_read_only is on/ } @log),
	'promoted node: the step worker waits while pg_auto_failover holds the node read-only');
my @failed = grep { /ERROR:  cannot execute \w+ in a read-only transaction/ } @log;
is(scalar(@failed), 0, 'promoted node: the step worker does not fail on the fence')
  or diag(join("\n", @failed));

done_testing();
