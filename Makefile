# Sesame: every entry point installs the Debian packages it needs (as root) before it builds.
SWIFT        ?= swift
DEB_PACKAGES := pkg-config libssl-dev libsqlite3-dev libpq-dev libmicrohttpd-dev ca-certificates
# Tests start a throwaway PostgreSQL cluster, drive the server with the official Appwrite Python SDK (a venv in
# .build/pyenv, made by the tests) and its pages with headless Chromium (Selenium in that venv), and read the release
# binary's links with readelf (binutils); benchmarks use wrk.
TEST_PACKAGES  := postgresql python3 python3-venv chromium chromium-driver binutils
BENCH_PACKAGES := wrk postgresql
FUZZ_SECONDS ?= 60
# make test fuzzes the faces for this long, with a seed taken from the commit (so a run can be replayed).
FACE_FUZZ_SECONDS ?= 90
FACE_FUZZ_SEED    ?= $(shell printf '%d' 0x$$(git rev-parse --short=12 HEAD 2>/dev/null || echo 1))
# The test build is strict: any warning or undeclared module import fails it.
STRICT       := -Xswiftc -warnings-as-errors --explicit-target-dependency-import-check error
# The release build of `sesame` links the Swift runtime and Foundation into the binary: it runs where no Swift toolchain
# is installed, and keeps about 5 MB less resident than with the toolchain's shared libraries. Its crash reports are
# written by the toolchain's self-contained backtracer, which `make install` puts beside it (libexec/sesame). The
# benchmark and fuzzing tools stay linked against the shared libraries (static FoundationNetworking would need libcurl's
# development files); switching between the two relinks, nothing more.
RELEASE      := -c release --static-swift-stdlib
BACKTRACER   ?= $(realpath $(dir $(realpath $(shell command -v $(SWIFT))))../libexec/swift/linux/swift-backtrace-static)

.PHONY: deps build run test bench fuzz face-fuzz clean install install-files

deps:
	@scripts/ensure-deps.sh $(DEB_PACKAGES)

build: deps
	$(SWIFT) build --product sesame

## run: the server on LISTEN (default SESAME_LISTEN, else 127.0.0.1:PORT, PORT 8080) with the embedded SQLite
## database in ./.sesame (first start prints an admin key): make run PORT=9000, make run LISTEN=0.0.0.0:9090
PORT   ?= 8080
LISTEN ?= $(or $(SESAME_LISTEN),127.0.0.1:$(PORT))
run: build
	.build/debug/sesame serve --db sqlite:./.sesame/sesame.db --listen $(LISTEN)

## install: the release build of `sesame` into $(DESTDIR)$(PREFIX)/bin (PREFIX /usr/local by default), with its web
## files beside it (Sesame_SesameServer.resources: the binary finds them next to itself): make install PREFIX=~/.local
PREFIX ?= /usr/local
install: deps
	$(SWIFT) build $(RELEASE) --product sesame
	@$(MAKE) --no-print-directory install-files BUILD=.build/release

# install-files: copies the binary and resources of an existing build (BUILD) without building, and the backtracer.
BUILD ?= .build/release
install-files:
	@test -n "$(BACKTRACER)" || { echo "no swift-backtrace-static in the Swift toolchain (set BACKTRACER=PATH)"; exit 1; }
	install -d "$(DESTDIR)$(PREFIX)/bin" "$(DESTDIR)$(PREFIX)/libexec/sesame"
	install -m 0755 "$(BUILD)/sesame" "$(DESTDIR)$(PREFIX)/bin/sesame"
	install -m 0755 "$(BACKTRACER)" "$(DESTDIR)$(PREFIX)/libexec/sesame/swift-backtrace"
	rm -rf "$(DESTDIR)$(PREFIX)/bin/Sesame_SesameServer.resources"
	cp -R "$(BUILD)/Sesame_SesameServer.resources" "$(DESTDIR)$(PREFIX)/bin/Sesame_SesameServer.resources"
	chmod -R u=rwX,go=rX "$(DESTDIR)$(PREFIX)/bin/Sesame_SesameServer.resources"

## test: every test, unit and command-line.
test: deps
	@scripts/ensure-deps.sh $(TEST_PACKAGES)
	$(SWIFT) build --build-tests $(STRICT)
	@# The release binary too: a test installs it and checks what it links and how it reports a crash.
	$(SWIFT) build $(RELEASE) --product sesame
	SWIFT=$(SWIFT) scripts/run-tests.sh
	@# The benchmarks must keep running; a short pass checks that, timing nothing.
	.build/debug/sesame-bench 0.01 1 > /dev/null && echo "sesame-bench smoke run: ok"
	.build/debug/sesame-ceremony-bench .build/debug/sesame 0.2 1 > /dev/null && echo "sesame-ceremony-bench smoke run: ok"
	@$(MAKE) --no-print-directory face-fuzz FACE_FUZZ_BUILD=debug

## bench: one JSON line per benchmark (name, value, unit, ceiling, ratio), release build.
bench: deps
	@scripts/ensure-deps.sh $(BENCH_PACKAGES)
	$(SWIFT) build -c release --product sesame-bench
	$(SWIFT) build -c release --product sesame-ceremony-bench
	$(SWIFT) build $(RELEASE) --product sesame
	.build/release/sesame-bench
	.build/release/sesame-ceremony-bench .build/release/sesame
	Benchmarks/http-health.sh

## fuzz: each libFuzzer target for FUZZ_SECONDS seconds over its committed seed corpus, then the face fuzzer as long.
fuzz: deps
	Fuzz/run.sh $(FUZZ_SECONDS)
	$(SWIFT) build -c release --product sesame-face-fuzz
	@$(MAKE) --no-print-directory face-fuzz FACE_FUZZ_BUILD=release FACE_FUZZ_SECONDS=$(FUZZ_SECONDS) FACE_FUZZ_SEED=$$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')

# The face fuzzer (Fuzz/FaceFuzz): hostile requests through the router into every documented route. A trap kills it, so
# the request it was answering is shown from the file it keeps.
FACE_FUZZ_BUILD ?= debug
face-fuzz:
	@.build/$(FACE_FUZZ_BUILD)/sesame-face-fuzz --seconds $(FACE_FUZZ_SECONDS) --seed $(FACE_FUZZ_SEED) \
		--last .build/face-fuzz-last-request.txt || { status=$$?; \
		echo "sesame-face-fuzz failed (exit $$status); the request it was answering (replay: --seed $(FACE_FUZZ_SEED)):"; \
		head -c 4000 .build/face-fuzz-last-request.txt; echo; exit 1; }

clean:
	rm -rf .build Fuzz/out
