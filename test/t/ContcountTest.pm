# Helpers shared by contcount's TAP tests.
package ContcountTest;

use strict;
use warnings;
use Exporter 'import';
use PostgreSQL::Test::Utils;
use Time::HiRes qw(usleep);

our @EXPORT = qw(kill9_postmaster_and_start);

# kill -9 of the postmaster: its children notice and exit on their own;
# start again once every process of the old server is gone.
sub kill9_postmaster_and_start
{
	my ($node) = @_;
	my @pids = split /\n/,
	  $node->safe_psql('postgres', 'SELECT pid FROM pg_stat_activity');
	my ($postmaster) = split /\n/, slurp_file($node->data_dir . '/postmaster.pid');
	$node->kill9;
	for my $pid ($postmaster, @pids)
	{
		for (1 .. 300)
		{
			last unless kill(0, $pid);
			usleep(100_000);
		}
	}
	$node->start;
	return;
}

1;
