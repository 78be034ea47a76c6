# Benchmarks (bench/README.md): `make bench` builds them, `make bench-run` runs them.
#   make bench-run [SNAPSHOT=FILE] [BENCH_ARGS='-r 5 -c 1']
# Without SNAPSHOT, bench/run-analysis takes (once, in the QEMU guest, ~1 min) a whole-kernel
# snapshot of the target kernel into build/bench/ and reuses it afterwards.
BENCH_SRCS := $(wildcard bench/*.c)
BENCH_BINS := $(BENCH_SRCS:%.c=$(B)/%)

.PHONY: bench bench-run bench-splice bench-bpf bench-install bench-trace bench-profile bench-by bench-startup
bench: $(BENCH_BINS) $(B)/bench/fentry.bpf.o $(B)/bench/kprobe_parts.bpf.o

# The BPF fentry/fexit peer (bench/fentry_time.c loads it from beside itself): no kernel headers,
# the programs read no argument
$(B)/bench/fentry.bpf.o $(B)/bench/kprobe_parts.bpf.o: $(B)/bench/%.bpf.o: bench/bpf/%.bpf.c
	@mkdir -p $(dir $@)
	$(CLANG) -target bpf -O2 -g -Wall -Werror -I/usr/include/$(shell gcc -dumpmachine) -c -o $@ $<

# Per-hit cost of kinstr's probes beside kprobes, in one guest run (bench/run-splice).
bench-splice: $(BENCH_BINS)
	bench/run-splice

# Per-hit cost of one BPF program run by `kinstr attach` beside the same program on an optprobe and on an
# int3 kprobe at the same address, in one guest run (bench/run-bpf; build/bench/bpf_kprobe loads it).
bench-bpf: $(BENCH_BINS)
	bench/run-bpf

# Time to install and remove 1,000 and 10,000 probes beside register_kprobes(), in one guest run
# (bench/run-install); BENCH_N='1000 10000' sets the probe counts.
bench-install: $(BENCH_BINS)
	bench/run-install $(BENCH_N)

# Cost per event of the tracer beside kprobe events (and LTTng's, if built), in one guest run
# (bench/run-trace); the host ring's records/s: build/bench/ring_rate (bench/README.md).
bench-trace: $(BENCH_BINS)
	bench/run-trace

# Per-call cost of timing a function beside kprobe+kretprobe events, bpftrace and function_graph,
# in one guest run (bench/run-profile; installs bpftrace if missing).
bench-profile: $(BENCH_BINS)
	bench/run-profile

# Per-hit cost of count --by comm, span and a filtered-out hit beside bpftrace's kfunc and kprobe
# programs, as ratios, in one guest run per mode, wall and icount (bench/run-by; installs bpftrace if missing).
bench-by: $(BENCH_BINS)
	bench/run-by --icount

# Start-up (fork to first output) of kinstr -l, count -d 0.1 and disasm beside bpftrace -l, as ratios, in one
# guest run under -icount (bench/run-startup; needs bpftrace).
bench-startup: $(BENCH_BINS)
	bench/run-startup --icount

bench-run: $(BENCH_BINS)
	bench/run-analysis $(SNAPSHOT) $(if $(BENCH_ARGS),-- $(BENCH_ARGS))

$(B)/bench/%: bench/%.c $(B)/libkinstr.a
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) -o $@ $< $(B)/libkinstr.a $(LIBS)

-include $(BENCH_BINS:=.d)

# nginx under wrk in the guest: the case study (docs/case-study-nginx.md) and the profiler's
# overhead beside kprobe+kretprobe events (bench/run-nginx; installs nginx-light and wrk if missing)
.PHONY: case-study bench-nginx
case-study bench-nginx:
	bench/run-nginx
