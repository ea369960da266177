# airlock — build, run and test on Debian 12 with the Swift toolchain on PATH.
SWIFT ?= swift
ROOT ?= var
# Debian packages the build and the tests need (the tests use sha256sum from coreutils; the
# content tests libmagic, the system mime.types and a clamd they start themselves).
DEBIAN_PACKAGES = libseccomp-dev libarchive-dev libinotifytools0-dev libssl-dev libisal-dev libsystemd-dev libjansson-dev pkg-config systemd \
	libmagic-dev libmagic-mgc media-types clamav-daemon prometheus

.PHONY: all deps build release run test bench keyed-fixtures unicode-tables clean

all: build

# Installs whichever of DEBIAN_PACKAGES is missing (needs root, or sudo).
deps:
	@missing=""; for p in $(DEBIAN_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO=sudo; fi; \
		$$SUDO apt-get update && $$SUDO apt-get install -y $$missing; \
	fi

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

# Lays out ./var (idempotent) and watches ./var/inbox until Ctrl-C.
run: build
	.build/debug/airlock init --root $(ROOT)
	.build/debug/airlock run --root $(ROOT)

test: build
	$(SWIFT) build --build-tests
	$(SWIFT) test

# Benchmarks against peers (bsdtar, inotifywait); not part of test. Results in bench/results/latest.md.
bench: deps
	bash bench/run.sh

# Regenerates fixtures/keyed/: the Foundation-made samples, then the hand-built ones and the manifest.
keyed-fixtures:
	swiftc fixtures/keyed/generator/main.swift Sources/AirlockKeyed/ArchivedMemo.swift \
		Sources/AirlockKeyed/StableArchive.swift -o .build/keyed-samples
	SWIFT_DETERMINISTIC_HASHING=1 .build/keyed-samples fixtures/keyed
	python3 fixtures/keyed/make_hostile.py

# Regenerates Sources/AirlockPolicy/UnicodeTables.swift from Debian's unicode-data (/usr/share/unicode).
unicode-tables:
	python3 scripts/make_unicode_tables.py

clean:
	rm -rf .build
