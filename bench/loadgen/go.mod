module sless.bench/loadgen

go 1.21
