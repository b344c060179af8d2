# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The plots of make bench, from the *.dat files arenakit bench writes:
#   gnuplot -e "dir='build/bench'" bench/plots.gp
# A plot whose data a run did not produce (one section only) is skipped.
have_file(f) = system("test -e '".f."' && echo 1") eq "1"
set terminal pngcairo size 1000,640 noenhanced
set datafile separator whitespace
set key autotitle columnhead outside right
set logscale x 2
set format x "2^%L"
set xlabel "list length (nodes)"
set ylabel "ns per node (median)"
set grid

do for [v in "in-order shuffled"] {
	f = dir."/walk-".v.".dat"
	if (have_file(f)) {
		set output dir."/walk-".v.".png"
		set title "Walking one arena list: each mechanism, and native C through the mmap (".v.")"
		plot for [i=2:*] f using 1:i with linespoints
	}
}

set xlabel "entries"
set ylabel "ns per operation (median)"
set logscale y 2
do for [k in "4-byte-keys 16-byte-keys"] {
	f = dir."/htab-".k.".dat"
	if (have_file(f)) {
		set output dir."/htab-".k.".png"
		set title "Arena hash table against BPF_MAP_TYPE_HASH (".k.")"
		plot for [i=2:*] f using 1:i with linespoints
	}
}
