# accuracy_splice.awk: copies docs/accuracy-table.md (the first file, but its
# title) between the accuracy-table markers of the second, one heading level
# down; the rest of the second file as it is.  Run by make accuracy-table.
#	awk -f report/accuracy_splice.awk docs/accuracy-table.md docs/mechanisms-and-accuracy.md
FNR == NR {
	if (FNR > 1) {
		if ($0 ~ /^## /)
			$0 = "#" $0
		table = table $0 "\n"
	}
	next
}
/^<!-- accuracy-table: written by make accuracy-table from here -->$/ {
	print
	printf "%s", table
	skipping = 1
	next
}
/^<!-- accuracy-table: to here -->$/ {
	skipping = 0
}
!skipping
