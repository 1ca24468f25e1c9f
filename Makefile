# dsig — top-level entry points. Each target works alone on a fresh Debian 12 machine.
#   make run     install missing packages, build (release), run the streaming benchmark (quick profile)
#                and the DSig latency benchmark (quick profile)
#   make check   install missing packages, build release + ASan/UBSan (+ TSan for threaded tests) + the libFuzzer
#                harnesses (clang), run every test under CTest (each harness: its corpus, then a short run)
#   make fuzz    the long, resumable libFuzzer campaign (docs/fuzzing.md; scripts/fuzz-campaign.sh)
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD ?= build
CMAKE_FLAGS ?=

.PHONY: all deps build build-asan build-tsan build-fuzz fuzz-build run check check-release check-asan check-tsan \
	check-fuzz fuzz fuzz-report fuzz-merge bench-full install clean

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/release/Makefile: | deps
	cmake -S . -B $(BUILD)/release -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

$(BUILD)/tsan/Makefile: | deps
	cmake -S . -B $(BUILD)/tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDSIG_TSAN=ON $(CMAKE_FLAGS)

$(BUILD)/asan/Makefile: | deps
	cmake -S . -B $(BUILD)/asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDSIG_SANITIZE=ON $(CMAKE_FLAGS)

# The libFuzzer build: clang, the library instrumented (-fsanitize=fuzzer-no-link,address,undefined).
$(BUILD)/fuzz/Makefile: | deps
	CC=clang cmake -S . -B $(BUILD)/fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDSIG_FUZZ=ON $(CMAKE_FLAGS)

build: deps $(BUILD)/release/Makefile
	cmake --build $(BUILD)/release -j $(JOBS)

build-asan: deps $(BUILD)/asan/Makefile
	cmake --build $(BUILD)/asan -j $(JOBS)

build-tsan: deps $(BUILD)/tsan/Makefile
	cmake --build $(BUILD)/tsan -j $(JOBS)

build-fuzz: deps $(BUILD)/fuzz/Makefile
	cmake --build $(BUILD)/fuzz -j $(JOBS) --target fuzzers

fuzz-build: build-fuzz

run: build
	$(BUILD)/release/dsig bench stream --quick --out $(BUILD)
	$(BUILD)/release/dsig bench dsig --quick

bench-full: build
	$(BUILD)/release/dsig bench stream --out $(BUILD)

check-release: build
	cd $(BUILD)/release && ctest --output-on-failure -j $(JOBS)

check-asan: build-asan
	cd $(BUILD)/asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ctest --output-on-failure -j $(JOBS) -LE no-asan

# ThreadSanitizer runs the tests that start threads (CTest label "threads"); none is a no-op.
check-tsan: build-tsan
	cd $(BUILD)/tsan && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
		ctest --output-on-failure -j $(JOBS) -L threads --no-tests=ignore

# Each harness replays its committed corpus, then fuzzes for DSIG_FUZZ_SECONDS (default 10).
check-fuzz: build-fuzz
	cd $(BUILD)/fuzz && ctest --output-on-failure -j $(JOBS) -L fuzz

check: check-release check-asan check-tsan check-fuzz

# The campaign: FUZZ_TARGET_RUNS executions per harness (default 10^7) and the coverage plateau,
# resumable (state in build/fuzz/campaign); FUZZ_JOBS harnesses at a time under nice -n 19.
fuzz: build-fuzz
	bash scripts/fuzz-campaign.sh run $(BUILD)/fuzz $(FUZZERS)

fuzz-report:
	bash scripts/fuzz-campaign.sh report $(BUILD)/fuzz $(FUZZERS)

# Minimise the campaign corpora into tests/fuzz/corpus (what is committed).
fuzz-merge: build-fuzz
	bash scripts/fuzz-campaign.sh merge $(BUILD)/fuzz $(FUZZERS)

install: build
	cmake --install $(BUILD)/release

clean:
	rm -rf $(BUILD)
