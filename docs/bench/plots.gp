# Made by harness/bench-report.py; run in .
reset
set terminal pngcairo size 800,500 noenhanced
set output 'roundtrip.png'
set title "Round trip, median ns\n6.1.192 aarch64, 2 CPUs (TCG: ratios, not hardware times)"
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.8 border -1
set ylabel "ns per round trip"
set yrange [0:*]
plot 'roundtrip.dat' using 2:xtic(1) title 'futex', '' using 3 title 'waitvar', '' using 4 title 'condvar'

reset
set terminal svg size 800,500 noenhanced
set output 'roundtrip.svg'
set title "Round trip, median ns\n6.1.192 aarch64, 2 CPUs (TCG: ratios, not hardware times)"
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.8 border -1
set ylabel "ns per round trip"
set yrange [0:*]
plot 'roundtrip.dat' using 2:xtic(1) title 'futex', '' using 3 title 'waitvar', '' using 4 title 'condvar'

reset
set terminal pngcairo size 800,500 noenhanced
set output 'wakeall.png'
set title "Wake-all: wake until all N have returned\n6.1.192 aarch64, 2 CPUs (TCG: ratios, not hardware times)"
set logscale xy
set xlabel "waiters N"
set ylabel "ns"
plot 'wakeall.dat' using 1:2 with linespoints title 'waitvar SET', '' using 1:3 with linespoints title 'FUTEX_WAKE(INT_MAX)'

reset
set terminal svg size 800,500 noenhanced
set output 'wakeall.svg'
set title "Wake-all: wake until all N have returned\n6.1.192 aarch64, 2 CPUs (TCG: ratios, not hardware times)"
set logscale xy
set xlabel "waiters N"
set ylabel "ns"
plot 'wakeall.dat' using 1:2 with linespoints title 'waitvar SET', '' using 1:3 with linespoints title 'FUTEX_WAKE(INT_MAX)'

reset
set terminal pngcairo size 800,500 noenhanced
set output 'collide.png'
set title "One wake with K waiters in the same bucket\n6.1.192 aarch64, 2 CPUs (TCG: ratios, not hardware times)"
set xlabel "colliding waiters K (futex: waiters on other futexes)"
set ylabel "ns"
set yrange [0:*]
set key top left
plot 'collide.dat' using 1:2 with linespoints title 'waitvar: until the waiter returned, 142.4 ns per waiter', '' using 1:3 with linespoints title 'futex: until the waiter returned, -10.2 ns per waiter', '' using 1:4 with linespoints title 'waitvar: the SET call, 121.7 ns per waiter', '' using 1:5 with linespoints title 'futex: the FUTEX_WAKE call, -7.6 ns per waiter'

reset
set terminal svg size 800,500 noenhanced
set output 'collide.svg'
set title "One wake with K waiters in the same bucket\n6.1.192 aarch64, 2 CPUs (TCG: ratios, not hardware times)"
set xlabel "colliding waiters K (futex: waiters on other futexes)"
set ylabel "ns"
set yrange [0:*]
set key top left
plot 'collide.dat' using 1:2 with linespoints title 'waitvar: until the waiter returned, 142.4 ns per waiter', '' using 1:3 with linespoints title 'futex: until the waiter returned, -10.2 ns per waiter', '' using 1:4 with linespoints title 'waitvar: the SET call, 121.7 ns per waiter', '' using 1:5 with linespoints title 'futex: the FUTEX_WAKE call, -7.6 ns per waiter'

reset
set terminal pngcairo size 1100,500 noenhanced
set output 'filter.png'
set title "Plain vs filtered wake, one of M satisfied\n6.1.192 aarch64, 2 CPUs (TCG: ratios, not hardware times)"
set multiplot layout 1,2
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.8 border -1
set yrange [0:*]
set ylabel "ns until the satisfied waiter returned"
plot 'filter.dat' using 2:xtic(1) title 'plain SET', '' using 3 title 'WAKE_NR FILTER'
set ylabel "spurious wakeups per wake"
plot 'filter.dat' using 4:xtic(1) title 'plain SET', '' using 5 title 'WAKE_NR FILTER'
unset multiplot

reset
set terminal svg size 1100,500 noenhanced
set output 'filter.svg'
set title "Plain vs filtered wake, one of M satisfied\n6.1.192 aarch64, 2 CPUs (TCG: ratios, not hardware times)"
set multiplot layout 1,2
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.8 border -1
set yrange [0:*]
set ylabel "ns until the satisfied waiter returned"
plot 'filter.dat' using 2:xtic(1) title 'plain SET', '' using 3 title 'WAKE_NR FILTER'
set ylabel "spurious wakeups per wake"
plot 'filter.dat' using 4:xtic(1) title 'plain SET', '' using 5 title 'WAKE_NR FILTER'
unset multiplot

reset
set terminal pngcairo size 1800,650 noenhanced
set output 'scaling.png'
set multiplot layout 1,3 title "Scaling: P pairs with K idle waiters\n6.1.192 aarch64, 2 CPUs (TCG: ratios, not hardware times)"
set xlabel 'pairs P'
set ylabel 'round trips/s'
set yrange [0:*]
set key below
set title '512 queues (sized)'
plot 'scaling-0.dat' using 1:2 with linespoints lt 1 title 'waitvar K=0', '' using 1:3 with linespoints lt 1 dt 2 title 'futex K=0', 'scaling-0.dat' using 1:4 with linespoints lt 2 title 'waitvar K=1000', '' using 1:5 with linespoints lt 2 dt 2 title 'futex K=1000', 'scaling-0.dat' using 1:6 with linespoints lt 3 title 'waitvar K=10000', '' using 1:7 with linespoints lt 3 dt 2 title 'futex K=10000'
set title '256 queues (bits8)'
plot 'scaling-1.dat' using 1:2 with linespoints lt 1 title 'waitvar K=0', '' using 1:3 with linespoints lt 1 dt 2 title 'futex K=0', 'scaling-1.dat' using 1:4 with linespoints lt 2 title 'waitvar K=1000', '' using 1:5 with linespoints lt 2 dt 2 title 'futex K=1000', 'scaling-1.dat' using 1:6 with linespoints lt 3 title 'waitvar K=10000', '' using 1:7 with linespoints lt 3 dt 2 title 'futex K=10000'
set title '4096 queues (bits12)'
plot 'scaling-2.dat' using 1:2 with linespoints lt 1 title 'waitvar K=0', '' using 1:3 with linespoints lt 1 dt 2 title 'futex K=0', 'scaling-2.dat' using 1:4 with linespoints lt 2 title 'waitvar K=1000', '' using 1:5 with linespoints lt 2 dt 2 title 'futex K=1000', 'scaling-2.dat' using 1:6 with linespoints lt 3 title 'waitvar K=10000', '' using 1:7 with linespoints lt 3 dt 2 title 'futex K=10000'
unset multiplot

reset
set terminal svg size 1800,650 noenhanced
set output 'scaling.svg'
set multiplot layout 1,3 title "Scaling: P pairs with K idle waiters\n6.1.192 aarch64, 2 CPUs (TCG: ratios, not hardware times)"
set xlabel 'pairs P'
set ylabel 'round trips/s'
set yrange [0:*]
set key below
set title '512 queues (sized)'
plot 'scaling-0.dat' using 1:2 with linespoints lt 1 title 'waitvar K=0', '' using 1:3 with linespoints lt 1 dt 2 title 'futex K=0', 'scaling-0.dat' using 1:4 with linespoints lt 2 title 'waitvar K=1000', '' using 1:5 with linespoints lt 2 dt 2 title 'futex K=1000', 'scaling-0.dat' using 1:6 with linespoints lt 3 title 'waitvar K=10000', '' using 1:7 with linespoints lt 3 dt 2 title 'futex K=10000'
set title '256 queues (bits8)'
plot 'scaling-1.dat' using 1:2 with linespoints lt 1 title 'waitvar K=0', '' using 1:3 with linespoints lt 1 dt 2 title 'futex K=0', 'scaling-1.dat' using 1:4 with linespoints lt 2 title 'waitvar K=1000', '' using 1:5 with linespoints lt 2 dt 2 title 'futex K=1000', 'scaling-1.dat' using 1:6 with linespoints lt 3 title 'waitvar K=10000', '' using 1:7 with linespoints lt 3 dt 2 title 'futex K=10000'
set title '4096 queues (bits12)'
plot 'scaling-2.dat' using 1:2 with linespoints lt 1 title 'waitvar K=0', '' using 1:3 with linespoints lt 1 dt 2 title 'futex K=0', 'scaling-2.dat' using 1:4 with linespoints lt 2 title 'waitvar K=1000', '' using 1:5 with linespoints lt 2 dt 2 title 'futex K=1000', 'scaling-2.dat' using 1:6 with linespoints lt 3 title 'waitvar K=10000', '' using 1:7 with linespoints lt 3 dt 2 title 'futex K=10000'
unset multiplot

set output
