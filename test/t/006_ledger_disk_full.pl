# A full disk while the ledger store grows (issue 9, item 7; the store in WAL
# since issue 10): the charge whose page cannot be added fails with 53100
# disk_full, releases nothing and is not counted as spent; the server stays
# up; once there is room again, every charge that succeeded is there and
# charging goes on.
#
# The disk is made "full" without root by RLIMIT_FSIZE: the postmaster is
# started through a pg_ctl wrapper that sets ulimit -f, and every process of
# the server inherits the limit.  The postmaster ignores SIGXFSZ, so a write
# that crosses the limit is cut short (pwrite returns fewer bytes, as on a
# full disk).  WAL segments of 1 MB (initdb --wal-segsize=1) and the
# catalogs of a fresh cluster stay under the limit; the ledger store, a
# relation of 8 kB pages, grows past it, and the limit falls in the middle
# of a page.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use File::Find;

my $epsilon = '0.000001';	# the smallest; 1000 units
my $release = "contcount.running_counts(ARRAY[1], $epsilon, mechanism => 'binary')";
my $pad = 'x' x 1100;		# statements longer than the 1023 bytes an item keeps

my $node = PostgreSQL::Test::Cluster->new('disk_full');
$node->init(extra => ['--wal-segsize=1']);
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'contcount'");
$node->start;
$node->safe_psql('postgres', q{
    CREATE EXTENSION contcount;
    SELECT contcount.create_ledger('full', 1000);
    ALTER DATABASE postgres SET contcount.ledger = 'full';
});
my $pgdata = $node->data_dir;
my $store = "$pgdata/global/1668247156";

# spent is exactly $n charges of $epsilon, and the audit holds $n charges
sub spent_is
{
	my ($n, $what) = @_;
	is( $node->safe_psql('postgres', qq{
			SELECT l.spent = $n * $epsilon, count(c.*), sum(c.epsilon) = l.spent
			FROM contcount.ledgers l LEFT JOIN contcount.charges c ON c.ledger = l.name
			WHERE l.name = 'full' GROUP BY l.spent}),
		"t|$n|t", "$what: spent is exactly $n x $epsilon, and the audit lists $n charges");
}

# The file size limit the server runs under, from /proc: the postmaster's,
# which every backend inherits (a backend's own would be gone once its
# session ends).
sub backend_file_limit
{
	my ($pid) = split /\n/, slurp_file($node->data_dir . '/postmaster.pid');
	my ($line) = grep { /^Max file size/ } split /\n/, slurp_file("/proc/$pid/limits");
	return (split /\s+/, $line)[3];
}

is($node->safe_psql('postgres', "SELECT r.t FROM $release r"), '1', 'a release');
spent_is(1, 'the first charge');
is(-s $store, 8192, 'the store is one page');

# Nothing of a fresh cluster is larger than a WAL segment, 1 MB.
my @big;
find(sub { push @big, $File::Find::name if -f $_ && -s _ > 1024 * 1024 }, $pgdata);
is_deeply(\@big, [], 'no file of the cluster is larger than 1 MB');

# The limit: 1100 kB, half way into the store's page 137.
my $limit_kb = 1100;
my $limit = $limit_kb * 1024;
$node->stop;
my ($pg_ctl) = grep { -x $_ } map { "$_/pg_ctl" } split /:/, $ENV{PATH};
my $wrappers = PostgreSQL::Test::Utils::tempdir;
open(my $fh, '>', "$wrappers/pg_ctl") or die "$wrappers/pg_ctl: $!";
print $fh "#!/bin/bash\nulimit -f $limit_kb || exit 1\nexec '$pg_ctl' \"\$\@\"\n";
close $fh;
chmod 0755, "$wrappers/pg_ctl" or die;
{
	local $ENV{PATH} = "$wrappers:$ENV{PATH}";
	$node->start;
}
is(backend_file_limit(), $limit, "the server runs with files limited to $limit bytes");

# Charge from one statement until the store is full: the charges that fit
# succeed, the first that needs a page that does not fit fails with 53100.
my ($ret, $out, $err) = $node->psql('postgres', qq{
DO \$\$
DECLARE
    pad text := '$pad';
    n int := 0;
BEGIN
    LOOP
        PERFORM * FROM $release;
        n := n + 1;
        EXIT WHEN n = 5000;
    END LOOP;
    RAISE NOTICE 'charges=% no error', n;
EXCEPTION WHEN OTHERS THEN
    RAISE NOTICE 'charges=% sqlstate=% message=%', n, SQLSTATE, SQLERRM;
END \$\$;});
my ($charges, $sqlstate, $message) =
  $err =~ /NOTICE:  charges=(\d+) sqlstate=(\w+) message=(.*)/ or diag("psql: $ret, $err");
ok($charges > 500, "charges succeed until the store is full ($charges of them)");
is($sqlstate, '53100', 'the charge that does not fit fails with 53100 disk_full');
like($message, qr/^could not extend file "global\/1668247156"/, 'and says which file');
my $pages = int((-s $store) / 8192);
is($pages, 137, 'the store holds the 137 whole pages that fit');
spent_is(1 + $charges, 'after the failed charge');

# The same as a statement of its own: an error a client can test, no rows.
($ret, $out, $err) = $node->psql('postgres', qq{\\set VERBOSITY verbose
SELECT r.t, length('$pad') FROM $release r;});
isnt($ret, 0, 'a release whose charge does not fit fails');
is($out, '', 'and returns no row');
like($err, qr/ERROR:  53100: could not extend file "global\/1668247156"/, 'with 53100');
like($err, qr/HINT:  Check free disk space/, 'and a hint');
spent_is(1 + $charges, 'after the failed release');
ok($node->safe_psql('postgres', 'SELECT true'), 'the server is up');

# Room again: a restart without the limit finds every charge that succeeded
# and none that failed, and charging goes on.
$node->stop;
$node->start;
is(backend_file_limit(), 'unlimited', 'restarted without the file size limit');
spent_is(1 + $charges, 'after the restart');
ok(!$node->log_contains('ledger store is damaged'), 'the store loads undamaged');
is($node->safe_psql('postgres', "SELECT r.t, length('$pad') FROM $release r"),
	'1|1100', 'a release succeeds');
cmp_ok(-s $store, '>', $limit, 'and the store grows past the old limit');
spent_is(2 + $charges, 'after the new charge');
ok(!$node->log_contains('PANIC'), 'no PANIC in the server log');
ok(!$node->log_contains('terminated by signal'), 'and no process killed by a signal');

done_testing();
