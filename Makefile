# Sesame: every entry point installs the Debian packages it needs (as root) before it builds.
SWIFT        ?= swift
DEB_PACKAGES := pkg-config libssl-dev libsqlite3-dev libpq-dev libmicrohttpd-dev
# Tests start a throwaway PostgreSQL cluster and drive the server with the official Appwrite Python SDK (a venv in
# .build/pyenv, made by the tests); benchmarks drive the server with wrk.
TEST_PACKAGES  := postgresql python3 python3-venv
BENCH_PACKAGES := wrk postgresql
FUZZ_SECONDS ?= 60
# The test build is strict: any warning or undeclared module import fails it.
STRICT       := -Xswiftc -warnings-as-errors --explicit-target-dependency-import-check error

.PHONY: deps build run test bench fuzz clean

deps:
	@scripts/ensure-deps.sh $(DEB_PACKAGES)

build: deps
	$(SWIFT) build --product sesame

## run: the server on 127.0.0.1:8080 with the embedded SQLite database in ./.sesame (first start prints an admin key).
run: build
	.build/debug/sesame serve --db sqlite:./.sesame/sesame.db --listen 127.0.0.1:8080

## test: every test, unit and command-line.
test: deps
	@scripts/ensure-deps.sh $(TEST_PACKAGES)
	$(SWIFT) build --build-tests $(STRICT)
	$(SWIFT) test --skip-build
	@# The benchmarks must keep running; a short pass checks that, timing nothing.
	.build/debug/sesame-bench 0.01 1 > /dev/null && echo "sesame-bench smoke run: ok"
	.build/debug/sesame-ceremony-bench .build/debug/sesame 0.2 1 > /dev/null && echo "sesame-ceremony-bench smoke run: ok"

## bench: one JSON line per benchmark (name, value, unit, ceiling, ratio), release build.
bench: deps
	@scripts/ensure-deps.sh $(BENCH_PACKAGES)
	$(SWIFT) build -c release --product sesame-bench
	$(SWIFT) build -c release --product sesame
	$(SWIFT) build -c release --product sesame-ceremony-bench
	.build/release/sesame-bench
	.build/release/sesame-ceremony-bench .build/release/sesame
	Benchmarks/http-health.sh

## fuzz: each libFuzzer target for FUZZ_SECONDS seconds over its committed seed corpus.
fuzz: deps
	Fuzz/run.sh $(FUZZ_SECONDS)

clean:
	rm -rf .build Fuzz/out
