# airlock — build, run and test on Debian 12 with the Swift toolchain on PATH.
SWIFT ?= swift
ROOT ?= var
# Debian packages the build and the tests need (the tests use sha256sum from coreutils; the
# content tests libmagic, the system mime.types and a clamd they start themselves).
DEBIAN_PACKAGES = libseccomp-dev libarchive-dev liblzma-dev libinotifytools0-dev libssl-dev libisal-dev libsystemd-dev \
	libjansson-dev pkg-config systemd gcc libmagic-dev libmagic-mgc media-types clamav-daemon prometheus

.PHONY: all print-packages deps build release run test bench bench-quick keyed-fixtures unicode-tables fuzz-zip \
	fuzz-rar fuzz-iso fuzz-cab fuzz-cpio clean

all: build

# Everything the build and make test need, for CI's apt-get (the tests also build man
# pages and a seccomp helper, and set ACLs: DEPLOY_PACKAGES).
print-packages:
	@echo $(DEBIAN_PACKAGES) $(DEPLOY_PACKAGES)

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

# The shipped binaries' linking (a release build with the static Swift runtime whose
# ldd names nothing from the toolchain), then the unit and end-to-end tests.
test: build
	$(MAKE) --no-print-directory check-imports
	$(MAKE) --no-print-directory check-sizes
	$(MAKE) --no-print-directory static-ldd
	$(SWIFT) build --build-tests
	$(SWIFT) test

# Every import of one of the package's targets is a dependency Package.swift lists,
# and every dependency listed is imported (part of make test).
.PHONY: check-imports
check-imports:
	python3 scripts/check_imports.py

# No Swift source file over 400 lines and no function over 60 (part of make test).
.PHONY: check-sizes
check-sizes:
	python3 scripts/check_sizes.py Sources

# Chaos soak, not part of test: producers drop valid and hostile archives into a
# daemon that is SIGKILLed and restarted at random for SECONDS; then every drop must
# have ended once, with one terminal journal record. `make soak SECONDS=600`.
SECONDS ?= 60
# The soak (and its short run in test) is Python 3, standard library only.
DEBIAN_PACKAGES += python3 strace
.PHONY: soak
soak: build
	python3 soak/soak.py --airlock .build/debug/airlock --seconds $(SECONDS)

# Benchmarks against peers (bsdtar, inotifywait); not part of test. Results in bench/results/latest.md.
bench: deps
	bash bench/run.sh

# Differential ZIP fuzzer (not part of test): airlock, libarchive (seekable and
# streaming) and Python's zipfile on mutants of the corpus; every disagreement must
# be a rejection. Keeps what it finds in fuzz/zip-findings/.
FUZZ_SECONDS ?= 300
fuzz-zip: build
	python3 fuzz/zip_differential.py --seconds $(FUZZ_SECONDS)

# Differential fuzzers of the optional formats (not part of test): airlock, libarchive
# and a second reader (7-Zip for RAR, ISO and CAB, isoinfo for ISO too, GNU cpio for
# cpio) on mutants of fixtures/formats and crafted archives; airlock must refuse every
# mutant the readers read differently. Findings go to fuzz/FORMAT-findings/.
# `make fuzz-rar FUZZ_SECONDS=600`. The readers are FUZZ_PACKAGES.
FUZZ_PACKAGES = p7zip-full genisoimage cpio
fuzz-rar fuzz-iso fuzz-cab fuzz-cpio: build
	@$(MAKE) --no-print-directory deps DEBIAN_PACKAGES="$(FUZZ_PACKAGES)"
	python3 fuzz/formats_differential.py --format $(@:fuzz-%=%) --seconds $(FUZZ_SECONDS)

# One run per case and smaller floods, for a developer's loop: bench/results/quick.md.
bench-quick: deps
	QUICK=1 bash bench/run.sh

# Where the time goes in each benchmark case (perf record -g and strace -f -c of
# `run --once` on the static release build): bench/results/profile.md.
# make profile [CASES="many-tiny keyed one-kib large-zip large-tar-zst small-zip"]
# perf is only needed here, so it is installed here rather than by deps.
.PHONY: profile
profile: deps
	@command -v perf >/dev/null || apt-get install -y linux-perf >/dev/null
	swift build -c release --static-swift-stdlib >/dev/null
	work=$$(mktemp -d); trap 'rm -rf "$$work"' EXIT; \
		python3 bench/profile.py .build/release/airlock "$$work" bench/results/profile.md $(CASES)

# Regenerates fixtures/keyed/: the Foundation-made samples, then the hand-built ones and the manifest.
keyed-fixtures:
	swiftc -package-name airlock fixtures/keyed/generator/main.swift Sources/AirlockKeyed/ArchivedMemo.swift \
		Sources/AirlockKeyed/StableArchive.swift Sources/AirlockKeyed/PropertyListValue.swift \
		Sources/AirlockKeyed/PropertyListWriting.swift -o .build/keyed-samples
	SWIFT_DETERMINISTIC_HASHING=1 .build/keyed-samples fixtures/keyed
	python3 fixtures/keyed/make_hostile.py

# Regenerates Sources/AirlockPolicy/UnicodeTables/ from Debian's unicode-data (/usr/share/unicode).
unicode-tables:
	python3 scripts/make_unicode_tables.py

clean:
	rm -rf .build

# --- install, static binaries and the Debian package -------------------------
# make install [PREFIX=/usr/local] [DESTDIR=] [BUILD=.build/release]: the decoders
# go to PREFIX/libexec/airlock/, where airlock finds them from its own path.
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
LIBEXECDIR ?= $(PREFIX)/libexec/airlock
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
DOCDIR ?= $(DATADIR)/doc/airlock
UNITDIR ?= $(PREFIX)/lib/systemd/system
TMPFILESDIR ?= $(PREFIX)/lib/tmpfiles.d
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
COMPLETIONDIR ?= $(DATADIR)/bash-completion/completions
BUILD ?= .build/release
SCDOC ?= scdoc
# What man pages, the package and the deployment tests need beyond DEBIAN_PACKAGES.
DEPLOY_PACKAGES = scdoc debhelper dpkg-dev lintian acl
PROGRAMS = airlock airlock-decoder airlock-keyed-decoder
MANPAGES = .build/man/airlock.1 .build/man/airlock.json.5
UNITS = airlock.service airlock@.service airlock-sweep.service airlock-sweep.timer
# Paths in the shipped files name /usr/local; an install rewrites them for PREFIX.
REPREFIX = sed -e 's|/usr/local|$(PREFIX)|g'

.PHONY: static static-ldd static-check man install uninstall deb deb-test deploy-deps

deploy-deps:
	@$(MAKE) --no-print-directory deps DEBIAN_PACKAGES="$(DEPLOY_PACKAGES)"

# Release binaries with the Swift runtime and Foundation linked in: a server needs
# only Debian's libraries (slow: not part of make test).
static: deps
	$(SWIFT) build -c release --static-swift-stdlib

# Fails if ldd names anything from the Swift toolchain, or if a program other than
# airlock-decoder links the archive libraries: libarchive or ISA-L in ldd, liblzma as
# its own NEEDED entry (libmagic and libsystemd load liblzma themselves, so ldd cannot
# tell), or a libarchive, ISA-L or liblzma function in its symbol table, which also
# catches a library linked statically. readelf is binutils', which gcc brings.
# Part of make test.
ARCHIVE_FREE = airlock airlock-keyed-decoder
static-ldd: static
	@for p in $(PROGRAMS); do echo "== ldd $$p"; ldd .build/release/$$p; done
	@if for p in $(PROGRAMS); do ldd .build/release/$$p; done | grep -E 'libswift|libFoundation|_FoundationICU|libdispatch|libBlocksRuntime|/opt/swift|/usr/lib/swift'; then \
		echo "static-ldd: linked to the Swift toolchain"; exit 1; fi
	@echo "static-ldd: nothing from the Swift toolchain"
	@for p in $(ARCHIVE_FREE); do \
		if ldd .build/release/$$p | grep -E 'libarchive\.so|libisal\.so'; then \
			echo "static-ldd: $$p links libarchive or ISA-L; only airlock-decoder may (Package.swift: AirlockArchive)"; exit 1; fi; \
		if readelf -d .build/release/$$p | grep -E 'NEEDED.*\[liblzma\.so'; then \
			echo "static-ldd: $$p links liblzma itself; only airlock-decoder may (Package.swift: AirlockArchive)"; exit 1; fi; \
		if readelf -Ws --wide .build/release/$$p | awk '$$8 ~ /^(archive_|isal_|lzma_)/ { print "  " $$8; found = 1 } END { exit !found }'; then \
			echo "static-ldd: $$p calls libarchive, ISA-L or liblzma (linked statically or not); only airlock-decoder may"; exit 1; fi; \
	done
	@echo "static-ldd: $(ARCHIVE_FREE) link neither libarchive, ISA-L nor liblzma"

# The ldd check, then sizes and start-up times.
static-check: static-ldd
	@ls -l $(addprefix .build/release/,$(PROGRAMS))
	@bash deploy/measure-startup.sh .build/release

man: $(MANPAGES)

.build/man/%: man/%.scd
	@mkdir -p .build/man
	$(SCDOC) < $< > $@

install: man
	@for p in $(PROGRAMS); do test -x $(BUILD)/$$p || { echo "install: $(BUILD)/$$p missing (make static, or BUILD=.build/debug)"; exit 1; }; done
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(TMPFILESDIR) \
		$(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(DATADIR)/airlock $(DESTDIR)$(DOCDIR)/examples \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(COMPLETIONDIR)
	install -m 0755 $(BUILD)/airlock $(DESTDIR)$(BINDIR)/airlock
	install -m 0755 $(BUILD)/airlock-decoder $(BUILD)/airlock-keyed-decoder $(DESTDIR)$(LIBEXECDIR)/
	for u in $(UNITS); do $(REPREFIX) deploy/$$u > $(DESTDIR)$(UNITDIR)/$$u; chmod 0644 $(DESTDIR)$(UNITDIR)/$$u; done
	$(REPREFIX) deploy/tmpfiles.d/airlock.conf > $(DESTDIR)$(TMPFILESDIR)/airlock.conf
	install -m 0644 deploy/sysusers.d/airlock.conf $(DESTDIR)$(SYSUSERSDIR)/airlock.conf
	install -m 0644 deploy/airlock.json $(DESTDIR)$(DATADIR)/airlock/airlock.json
	install -m 0644 etc/airlock.json $(DESTDIR)$(DOCDIR)/examples/airlock.json
	install -m 0644 README.md $(DESTDIR)$(DOCDIR)/README.md
	install -m 0644 deploy/README.md $(DESTDIR)$(DOCDIR)/README.deploy.md
	install -m 0644 .build/man/airlock.1 $(DESTDIR)$(MANDIR)/man1/airlock.1
	install -m 0644 .build/man/airlock.json.5 $(DESTDIR)$(MANDIR)/man5/airlock.json.5
	install -m 0644 completion/airlock.bash $(DESTDIR)$(COMPLETIONDIR)/airlock
	chmod 0644 $(DESTDIR)$(TMPFILESDIR)/airlock.conf

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/airlock $(addprefix $(DESTDIR)$(LIBEXECDIR)/,airlock-decoder airlock-keyed-decoder)
	rm -f $(addprefix $(DESTDIR)$(UNITDIR)/,$(UNITS)) $(DESTDIR)$(TMPFILESDIR)/airlock.conf $(DESTDIR)$(SYSUSERSDIR)/airlock.conf
	rm -f $(DESTDIR)$(MANDIR)/man1/airlock.1 $(DESTDIR)$(MANDIR)/man5/airlock.json.5 $(DESTDIR)$(COMPLETIONDIR)/airlock
	rm -rf $(DESTDIR)$(DATADIR)/airlock $(DESTDIR)$(DOCDIR)
	-rmdir $(DESTDIR)$(LIBEXECDIR)

# The Debian package (dpkg-buildpackage and debhelper; lintian afterwards): built
# in place, its files moved from the parent directory into .build/deb/.
deb: deps deploy-deps
	dpkg-buildpackage -b -us -uc
	mkdir -p .build/deb
	mv ../airlock_*.deb ../airlock_*.buildinfo ../airlock_*.changes .build/deb/
	-mv ../airlock-dbgsym_*.deb .build/deb/ 2>/dev/null
	lintian --info .build/deb/airlock_*.changes

# Installs the package, checks it, takes a drop in, removes and purges it (root).
deb-test:
	bash deploy/test-deb.sh
