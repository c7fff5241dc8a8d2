module sless.bench/frontsketch

go 1.21
