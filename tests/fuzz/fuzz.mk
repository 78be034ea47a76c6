# Fuzz targets (included by the top Makefile): `make fuzz` builds build/fuzz/fuzz_analyze, a
# libFuzzer target for decode + CFG + sites + relocation, with ASan and UBSan. The library's
# sources are compiled here again with clang and the sanitizers (not the gcc-built
# libkinstr.a), so that coverage and the sanitizers reach into lib/*/*.c.
# Needs clang-14 and libclang-rt-14-dev (libFuzzer, ASan and UBSan runtimes).
# Run it with tests/unit/test_fuzz.sh (bounded), or by hand:
#   build/fuzz/fuzz_analyze -max_len=4096 -rss_limit_mb=2048 CORPUS_COPY tests/fuzz/corpus
# Debian's `clang` package provides clang; clang-14 alone only clang-14.
FUZZ_CC     ?= $(firstword $(shell command -v clang clang-14 2>/dev/null) clang)
FUZZ_SAN    := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS := -g -O1 $(FUZZ_SAN) $(filter-out -Werror,$(WARN))
FUZZ_OBJS   := $(LIB_SRCS:%.c=$(B)/fuzz/%.o) $(B)/fuzz/tests/fuzz/fuzz_analyze.o $(B)/lib/bpf/stack_obj.o $(B)/lib/report/report_assets.o

.PHONY: fuzz
fuzz: $(B)/fuzz/fuzz_analyze

# Objects only, so -fsanitize=fuzzer instruments them without linking a main into each.
$(B)/fuzz/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -MMD -MP -c -o $@ $<

$(B)/fuzz/fuzz_analyze: $(FUZZ_OBJS)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $(FUZZ_OBJS) $(LIBS)

# The same target with a bug planted in lib/analysis/cfg.c (KINSTR_PLANT_ENDS_BLOCK: a ud2 ends no
# block), which the fuzz oracle, written apart from the library, must catch (tests/unit/test_fuzz.sh).
FUZZ_PLANT_OBJS := $(filter-out $(B)/fuzz/lib/analysis/cfg.o,$(FUZZ_OBJS)) $(B)/fuzz-plant/lib/analysis/cfg.o
$(B)/fuzz-plant/lib/analysis/cfg.o: lib/analysis/cfg.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) -DKINSTR_PLANT_ENDS_BLOCK $(FUZZ_CFLAGS) -MMD -MP -c -o $@ $<
$(B)/fuzz/fuzz_analyze_plant: $(FUZZ_PLANT_OBJS)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $(FUZZ_PLANT_OBJS) $(LIBS)

-include $(FUZZ_OBJS:.o=.d)

# The seed cutter for tests/fuzz/mkcorpus.sh (an ordinary gcc build against libkinstr.a).
$(B)/fuzz/cut_seeds: tests/fuzz/cut_seeds.c $(B)/libkinstr.a
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) -o $@ $< $(B)/libkinstr.a $(LIBS)
