# Crash loops under pgbench, with releases racing for the last of a budget
# (issue 10): eight clients release while the server is killed again and
# again, first by kill -9 of the postmaster (ContcountTest), then by kill -9
# of every server process at once the moment a charge is under way, racing
# eight clients for the last few releases; then drain.  Exactly the budget
# is spent, never more, and every value a client was shown was charged and
# survived the crashes.
#
# What is counted, and why it is sound: pgbench counts a transaction as
# processed only once the value of its one SELECT came back whole, so the
# processed counts are a lower bound of the values shown (a value whose
# connection died before pgbench took it in is not counted).  Every counted
# value must have a charge that survives the crash after it; a release cut
# in flight may have been charged without being counted, which costs budget
# and shows nothing (the safe side).  So after each crash:
#     shown so far <= charges on record = spent / e <= B / e,
# with the audit's charges adding up to the sums in memory, and at the end
# spent = B exactly.  (A store that showed a value before its charge was
# flushed fails the first line: such a build showed 194 values from a
# budget of 128 here.)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ContcountTest;
use Time::HiRes qw(usleep time);

my $budget = 4;
my $epsilon = '0.03125';                 # 1/32: 128 releases fit, in whole units
my $fits = 128;

my $node = PostgreSQL::Test::Cluster->new('crash_loops');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'contcount'
restart_after_crash = on
max_connections = 40
});
$node->start;
$node->safe_psql('postgres', qq{
    CREATE EXTENSION contcount;
    SELECT contcount.create_ledger('race', $budget);
    CREATE TABLE events AS SELECT i FROM generate_series(1, 100) i;
});

my $script = $node->basedir . '/release.sql';
open(my $fh, '>', $script) or die;
print $fh "SELECT contcount.noisy_count($epsilon, 'race') FROM events;\n";
close $fh;

# pgbench in the background: eight clients, throttled to rate transactions a
# second in all, or flat out
sub start_load
{
	my (%opt) = @_;
	my $run = { out => '', err => '' };
	my @cmd = (
		'pgbench', '--no-vacuum', '--client=8', '--jobs=2',
		($opt{rate} ? "--rate=$opt{rate}" : ()),
		($opt{time} ? "--time=$opt{time}" : "--transactions=$opt{transactions}"),
		'--file', $script, '-h', $node->host, '-p', $node->port, 'postgres');
	$run->{h} = IPC::Run::start(\@cmd, '>', \$run->{out}, '2>', \$run->{err});
	return $run;
}

# wait for pgbench to end; the number of values it took in
sub finish_load
{
	my ($run) = @_;
	$run->{h}->finish;
	note "pgbench:\n$run->{out}\n$run->{err}";
	my ($processed) = $run->{out} =~ /number of transactions actually processed: (\d+)/;
	die "pgbench printed no count:\n$run->{out}\n$run->{err}" unless defined $processed;
	return ($processed, $run->{err});
}

# spent, and the audit: number of charges, their sum, smallest and largest
sub ledger_state
{
	my $row = $node->safe_psql('postgres', qq{
        SELECT l.spent, count(c.*), coalesce(sum(c.epsilon), 0), min(c.epsilon), max(c.epsilon)
        FROM contcount.ledgers l LEFT JOIN contcount.charges c ON c.ledger = l.name
        WHERE l.name = 'race' GROUP BY l.spent});
	my ($spent, $charges, $sum, $min, $max) = split /\|/, $row;
	return { spent => $spent, charges => $charges, sum => $sum, min => $min, max => $max };
}

my $shown = 0;

# After every crash: the sums in memory agree with the audit, every charge is
# one release of epsilon, nothing beyond the budget, and every value shown so
# far has its charge.
sub check_after_crash
{
	my ($what) = @_;
	my $s = ledger_state();
	cmp_ok($s->{spent}, '<=', $budget, "$what: spent $s->{spent}, never more than $budget");
	ok($s->{charges} == 0 || ($s->{min} == $epsilon && $s->{max} == $epsilon),
		"$what: every charge is one release of $epsilon")
	  or diag("charges from $s->{min} to $s->{max}");
	ok($s->{sum} == $s->{spent} && $s->{charges} * $epsilon == $s->{spent},
		"$what: the audit's $s->{charges} charges add up to what is spent")
	  or diag("spent $s->{spent}, $s->{charges} charges adding up to $s->{sum}");
	cmp_ok($shown, '<=', $s->{charges},
		"$what: the $shown values shown so far were all charged, and their charges survived");
	return $s;
}

# Throttled crash loops: kill -9 of the postmaster once the budget is spent
# past each mark, while the releases go on.
for my $mark (1, 2, 3)
{
	my $load = start_load(rate => 100, time => 30);
	my $poll = $node->background_psql('postgres');
	my $spent = 0;
	{
		# (BackgroundPsql notes every query: not the hundreds of polls)
		no warnings 'redefine';
		local *PostgreSQL::Test::BackgroundPsql::note = sub { };
		my $deadline = time + 30;
		while (time < $deadline)
		{
			$spent = $poll->query_safe("SELECT spent FROM contcount.ledgers WHERE name = 'race'");
			last if $spent >= $mark;
			usleep(2_000);
		}
	}
	$poll->quit;
	ok($spent >= $mark && $spent < $budget, "loop to $mark: releases under way ($spent spent) when killed");
	kill9_postmaster_and_start($node);
	my ($processed, $err) = finish_load($load);
	$shown += $processed;
	like($err, qr/aborted|terminat|connection/i, "loop to $mark: pgbench's clients lost their server");
	check_after_crash("loop to $mark");
}

# A harder crash than kill -9 of the postmaster alone, whose backends go on
# until they notice it is gone (a release already sent may still complete):
# kill -9 of every process of the server at once, so that releases in
# flight are cut wherever they are.  The caller names the backends it knows
# of, killed with the postmaster; every other child of the postmaster is
# found by its working directory, the data directory, and killed right after.
sub kill9_all_and_start
{
	my (@known) = @_;
	my $data = $node->data_dir;
	my ($postmaster) = split /\n/, slurp_file("$data/postmaster.pid");
	my $server = sub {
		return map { m{^/proc/(\d+)/} ? $1 : () }
		  grep { (readlink($_) // '') eq $data } glob '/proc/[0-9]*/cwd';
	};
	$node->kill9;
	kill 'KILL', @known;
	for (1 .. 300)
	{
		my @left = $server->();
		kill 'KILL', @left;
		last unless @left || kill(0, $postmaster);
		usleep(50_000);
	}
	$node->start;
	return;
}

# Racing flat out for what is left: eight clients at once, every server
# process killed the moment the first of them is charged, while the others
# race; again and again until two releases are left (the last rounds race
# eight clients for fewer releases than there are clients).
my $round = 0;
while ($round < 12 && ledger_state()->{spent} < $budget - 2 * $epsilon)
{
	$round++;
	my $before = ledger_state()->{spent};
	my $poll = $node->background_psql('postgres');
	my $load = start_load(transactions => 1);
	my $spent = $before;
	my @backends;
	{
		no warnings 'redefine';
		local *PostgreSQL::Test::BackgroundPsql::note = sub { };
		my $deadline = time + 30;
		until ($spent > $before || time > $deadline)
		{
			($spent, my $pids) = split /\|/, $poll->query_safe(
				"SELECT spent, (SELECT string_agg(pid::text, ' ') FROM pg_stat_activity "
				  . "WHERE application_name = 'pgbench') FROM contcount.ledgers WHERE name = 'race'");
			@backends = split / /, $pids // '';
		}
	}
	kill9_all_and_start(@backends);
	$poll->quit;
	my ($processed) = finish_load($load);
	$shown += $processed;
	# (a charge seen in memory may not have been flushed yet: the crash can
	# take it, with the value it would have paid for)
	ok($spent > $before, "race $round: killed while releases raced ($before spent, then $spent)");
	my $s = check_after_crash("race $round");
	note "race $round: $processed values taken in, $s->{spent} spent after the crash";
}

# Drain: eight clients flat out until every one of them is refused.
{
	my $load = start_load(time => 20);
	my ($processed, $err) = finish_load($load);
	$shown += $processed;
	like($err, qr/would be overspent/, 'drain: releases end refused for the budget');
}
my $s = check_after_crash('drained');
is($s->{spent}, $budget, "drained: exactly the budget spent");
is($s->{charges}, $fits, "drained: exactly $fits charges of $epsilon");
cmp_ok($shown, '<=', $fits, "at most $fits values shown in all ($shown counted)");
is($node->safe_psql('postgres', "SELECT remaining FROM contcount.ledgers WHERE name = 'race'"),
	'0', 'nothing remains');

# and one more crash changes nothing
kill9_postmaster_and_start($node);
$s = check_after_crash('after a last kill -9');
is($s->{spent}, $budget, 'after a last kill -9: still exactly the budget');
my ($ret, $out, $err) = $node->psql('postgres',
	"\\set VERBOSITY verbose\nSELECT contcount.noisy_count(0.000001, 'race') FROM events");
like($err, qr/ERROR:\s+ZB001:/, 'and not even the smallest release goes through');

# Crash recovery that meets charges already on disk.  With full_page_writes
# off (a supported setting, on file systems that cannot tear pages) nothing
# resets a page before redo, so a page written out after the last checkpoint
# already holds the charges that redo replays again: each must count once.
# Tiny shared buffers and a scan of a larger table push the store's dirty
# page out before the crash.
{
	my $fpw = PostgreSQL::Test::Cluster->new('no_full_page_writes');
	$fpw->init;
	$fpw->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'contcount'
full_page_writes = off
shared_buffers = 32
max_connections = 10
checkpoint_timeout = '1h'
});
	$fpw->start;
	$fpw->safe_psql('postgres', q{
        CREATE EXTENSION contcount;
        SELECT contcount.create_ledger('pages', 100);
        CREATE TABLE events AS SELECT i FROM generate_series(1, 100) i;
        CREATE TABLE big AS SELECT i, repeat('x', 200) AS pad FROM generate_series(1, 20000) i;
        CHECKPOINT;
    });
	for my $i (1 .. 10)
	{
		$fpw->safe_psql('postgres',
			"SELECT contcount.noisy_count(0.5, 'pages') FROM events /* on disk $i */");
	}
	$fpw->safe_psql('postgres', 'SELECT count(*) FROM big') for 1 .. 3;
	# is the last charge's statement in some file of the server, outside WAL?
	my $on_disk = 0;
	my @dirs = ($fpw->data_dir);
	while (my $dir = shift @dirs)
	{
		opendir(my $dh, $dir) or next;
		for my $entry (grep { !/^\.\.?$/ } readdir $dh)
		{
			my $path = "$dir/$entry";
			next if $path eq $fpw->data_dir . '/pg_wal';
			if (-d $path) { push @dirs, $path; next; }
			next unless -f $path && -s $path < 10_000_000;
			$on_disk = 1 if slurp_file($path) =~ m{/\* on disk 10 \*/};
		}
		closedir $dh;
	}
	ok($on_disk, 'no full_page_writes: the store page with the charges was written before the crash');
	$fpw->stop('immediate');
	$fpw->start;
	is($fpw->safe_psql('postgres', "SELECT spent FROM contcount.ledgers WHERE name = 'pages'"),
		'5', 'no full_page_writes: redo over a page that has its charges counts each once');
	is($fpw->safe_psql('postgres', "SELECT count(*) FROM contcount.charges WHERE ledger = 'pages'"),
		'10', 'no full_page_writes: ten charges in the audit, none twice');
	$fpw->stop;
}

done_testing();
