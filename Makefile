# airlock — build, run and test on Debian 12 with the Swift toolchain on PATH.
SWIFT ?= swift
ROOT ?= var
# Debian packages the build and the tests need (the tests use sha256sum from coreutils; the
# content tests libmagic, the system mime.types and a clamd they start themselves).
DEBIAN_PACKAGES = libseccomp-dev libarchive-dev liblzma-dev libinotifytools0-dev libssl-dev libisal-dev libsystemd-dev \
	libjansson-dev zlib1g-dev pkg-config systemd gcc libmagic-dev libmagic-mgc media-types clamav-daemon prometheus \
	libnats-dev nats-server openssl python3-cryptography

.PHONY: all print-packages deps build release run test test-integration check test-weights bench bench-quick keyed-fixtures unicode-tables fuzz-zip \
	fuzz-tar fuzz-7z fuzz-rar fuzz-iso fuzz-cab fuzz-cpio clean

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

# Debug builds keep line tables only: crash backtraces still name files and lines,
# and a cold build with the tests takes 7% less CPU than with full debug info (no
# debugger runs here). make build and make test pass the same flags, so neither
# rebuilds what the other built.
DEBUG_FLAGS ?= -Xswiftc -gline-tables-only

build: deps
	$(SWIFT) build $(DEBUG_FLAGS)

release: deps
	$(SWIFT) build -c release

# Lays out ./var (idempotent) and watches ./var/inbox until Ctrl-C.
run: build
	.build/debug/airlock init --root $(ROOT)
	.build/debug/airlock run --root $(ROOT)

# make test: the check before every commit, 2½ to 3 minutes cold on 2 cores. Imports
# and sizes, the build with the tests (which builds the programs too, with the same
# flags as make build), then the unit and end-to-end tests, run as several test
# processes at once, each taking the next batch of suites from one queue, so that both
# cores work while tests wait (scripts/test_shards.py;
# TEST_SHARDS=1 runs one process; every listed test must have run and passed).
test: deps
	$(MAKE) --no-print-directory check-imports
	$(MAKE) --no-print-directory check-sizes
	$(SWIFT) build --build-tests $(DEBUG_FLAGS)
	python3 scripts/test_shards.py

# make test-integration: the rest of what CI runs after make test, against real
# peers (about 12 minutes; needs root): the release programs a server runs, linked
# with the static Swift runtime, and their ldd (static-ldd: a release build also
# meets the optimiser, which has refused code a debug build compiles), real upload
# clients, the Cockpit page in headless Chromium, which installs those release
# programs as a package would, and a fleet on a real CephFS.
test-integration: deps
	$(SWIFT) build $(DEBUG_FLAGS)
	$(MAKE) --no-print-directory static-ldd
	$(MAKE) --no-print-directory client-test
	$(MAKE) --no-print-directory test-cockpit COCKPIT_BUILD=.build/release
	$(MAKE) --no-print-directory test-browser-markup
	$(MAKE) --no-print-directory test-cephfs

# Everything CI runs.
check: test test-integration

# Each suite run alone, its seconds written to Tests/suite-weights.tsv, which
# make test uses to deal suites out to its processes evenly (not part of test).
test-weights: deps
	$(SWIFT) build --build-tests $(DEBUG_FLAGS)
	python3 scripts/test_shards.py --measure

# A fleet on a real CephFS (root: a one-node Ceph cluster on 127.0.0.1, mounted twice
# by ceph-fuse in two mount namespaces; part of make test-integration): the filesystem facts the
# fleet relies on (rename, NOREPLACE, locks, eviction of a frozen client), then a short
# soak of two instances under SIGKILLs and a client frozen past session_timeout.
# `make soak-cephfs SECONDS=600` runs a longer soak.
.PHONY: test-cephfs soak-cephfs
test-cephfs: build
	python3 Tests/CephFS/facts.py --races 30 --freeze
	python3 Tests/CephFS/soak.py --airlock .build/debug/airlock --seconds 30 --pause 1.5 --freezes 1

soak-cephfs: build
	python3 Tests/CephFS/soak.py --airlock .build/debug/airlock --seconds $(SECONDS) --freezes 3

# Real upload clients (OpenSSH sftp and scp into a chroot, rsync, smbclient against
# smbd, curl against Apache mod_dav), each server started on 127.0.0.1 by the test
# with deploy/'s snippets, into a daemon run as a service user with the unit's
# capabilities (part of make test-integration; needs root). CLIENT_FLAGS=--table prints the
# results and latencies without failing, e.g. to compare two builds:
# make client-test CLIENT_FLAGS="--table --airlock /path/to/other/build/debug --unit /path/to/its/airlock.service"
CLIENT_FLAGS ?=
.PHONY: client-test
client-test: build
	python3 Tests/Clients/clients.py $(CLIENT_FLAGS)

# The Cockpit page in headless Chromium through a real cockpit-ws login (root: it
# creates users, a sudo rule and its own cockpit-ws on 127.0.0.1); part of make test-integration.
# Debian's python3 (/usr/bin/python3), where python3-selenium is installed.
# Screenshots of every page at 1280x800 and 390x844 go to SCREENSHOTS.
SCREENSHOTS ?= .build/cockpit-screenshots
.PHONY: test-cockpit bench-review
# COCKPIT_BUILD: the programs it installs (by default .build/release if built, else .build/debug).
COCKPIT_BUILD ?=
test-cockpit:
	/usr/bin/python3 Tests/cockpit/review_test.py --screenshots $(SCREENSHOTS) $(if $(COCKPIT_BUILD),--build $(COCKPIT_BUILD))

# Hidden script in SVG, XML and HTML files as headless Chromium runs it, against
# airlock inspect under a profile that denies active-content: whatever runs must be
# refused (part of make test-integration; needs no root).
.PHONY: test-browser-markup
test-browser-markup: build
	/usr/bin/python3 Tests/Browser/markup_in_browser.py --airlock .build/debug/airlock

# How fast the page's commands answer with 100,000 quarantine entries (not part of
# test): bench/results/quarantine-review.md.
bench-review: static
	python3 bench/quarantine_review.py --entries 100000 --airlock .build/release/airlock

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

# Differential tar fuzzer (not part of test): airlock, bsdtar, GNU tar and Python's
# tarfile on header mutants; every mutant they read differently must be refused.
fuzz-tar: build
	@$(MAKE) --no-print-directory deps DEBIAN_PACKAGES="libarchive-tools tar"
	python3 fixtures/fuzz_tar_differential.py --seconds $(FUZZ_SECONDS) --keep fuzz/tar-findings

# Differential fuzzers of 7z and the optional formats (not part of test): airlock,
# libarchive and a second reader (7-Zip for 7z, RAR, ISO and CAB, isoinfo for ISO too,
# GNU cpio for cpio) on mutants of the fixtures and crafted archives; airlock must
# refuse every mutant the readers read differently. Findings go to fuzz/FORMAT-findings/.
# `make fuzz-7z FUZZ_SECONDS=600`. The readers are FUZZ_PACKAGES.
FUZZ_PACKAGES = p7zip-full genisoimage cpio
fuzz-7z fuzz-rar fuzz-iso fuzz-cab fuzz-cpio: build
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

# Regenerates fixtures/classes/ (the content-class evasion corpus; Python's standard library only).
.PHONY: class-fixtures
class-fixtures:
	python3 fixtures/classes/make_classes.py

# Regenerates Sources/AirlockPolicy/UnicodeTables/ and Sources/AirlockText/InvisibleScalarRanges.swift
# from Debian's unicode-data (/usr/share/unicode; apt-get install unicode-data, not needed by make test).
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
# The system configuration an installed airlock reads when given no --root or --config:
# /etc for PREFIX=/usr, PREFIX/etc otherwise (Sources/AirlockConfiguration/Installation.swift).
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
UNITDIR ?= $(PREFIX)/lib/systemd/system
TMPFILESDIR ?= $(PREFIX)/lib/tmpfiles.d
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
COMPLETIONDIR ?= $(DATADIR)/bash-completion/completions
# The Cockpit page (Cockpit looks in /usr/share/cockpit and /usr/local/share/cockpit)
# and the sudo rule that lets analysts run airlock's review commands as the service
# user on the service's root; both name AIRLOCK_USER and AIRLOCK_ROOT.
COCKPITDIR ?= $(DATADIR)/cockpit/airlock
SUDOERSDIR ?= /etc/sudoers.d
AIRLOCK_USER ?= airlock
AIRLOCK_ROOT ?= /var/lib/airlock
COCKPIT_FILES = manifest.json index.html airlock.js text.js chart.js airlock.css
BUILD ?= .build/release
SCDOC ?= scdoc
# What man pages, the package and the deployment tests need beyond DEBIAN_PACKAGES
# (bash-completion: the test that runs the completion script).
DEPLOY_PACKAGES = scdoc debhelper dpkg-dev lintian acl bash-completion
# The upload clients and the servers client-test starts itself (apache2 brings htpasswd).
DEPLOY_PACKAGES += openssh-server openssh-client samba smbclient apache2 curl rsync
# The Cockpit page's browser test: a real cockpit-ws and login (PAM, sudo), driven
# by headless Chromium through selenium (make test-cockpit, part of make test-integration).
DEPLOY_PACKAGES += cockpit-ws cockpit-bridge cockpit-system sudo chromium chromium-driver python3-selenium
# A one-node Ceph cluster (mon, mgr, memstore OSD, MDS) and ceph-fuse for make test-cephfs.
DEPLOY_PACKAGES += ceph ceph-mds ceph-fuse
PROGRAMS = airlock airlock-decoder airlock-keyed-decoder airlock-publisher
MANPAGES = .build/man/airlock.1 .build/man/airlock.json.5
UNITS = airlock.service airlock@.service airlock-sweep.service airlock-sweep.timer airlock-publish.service
# Paths in the shipped files name /usr/local; an install rewrites them for PREFIX.
REPREFIX = sed -e 's|/usr/local|$(PREFIX)|g'
# ... and, for the page and the sudo rule, the service user and root.
RESERVICE = $(REPREFIX) -e 's|/var/lib/airlock|$(AIRLOCK_ROOT)|g' -e 's|(airlock)|($(AIRLOCK_USER))|' -e 's|user: "airlock"|user: "$(AIRLOCK_USER)"|'

.PHONY: static static-ldd ldd-check static-check man install uninstall deb deb-test deploy-deps

deploy-deps:
	@$(MAKE) --no-print-directory deps DEBIAN_PACKAGES="$(DEPLOY_PACKAGES)"

# Release binaries with the Swift runtime and Foundation linked in: a server needs
# only Debian's libraries (slow: not part of make test).
# SWIFT_BUILD_FLAGS: more for swift build (the package's Debian hardening flags,
# debian/rules). DEPS=: build with what is installed, installing nothing (a package
# build, whose Build-Depends are installed by its builder).
SWIFT_BUILD_FLAGS ?=
DEPS ?= deps
static: $(DEPS)
	$(SWIFT) build -c release --static-swift-stdlib $(SWIFT_BUILD_FLAGS)

# Fails if ldd names anything from the Swift toolchain, or if a program other than
# airlock-decoder links the archive libraries: libarchive or ISA-L in ldd, liblzma as
# its own NEEDED entry (libmagic and libsystemd load liblzma themselves, so ldd cannot
# tell), or a libarchive, ISA-L or liblzma function in its symbol table, which also
# catches a library linked statically. readelf is binutils', which gcc brings.
# Part of make test-integration.
ARCHIVE_FREE = airlock airlock-keyed-decoder airlock-publisher
# Only airlock-publisher may link the NATS client (or any network library of its own).
NETWORK_FREE = airlock airlock-decoder airlock-keyed-decoder
static-ldd: static
	@$(MAKE) --no-print-directory ldd-check LDD_DIR=.build/release

# The checks above on the programs in LDD_DIR.
LDD_DIR ?= .build/release
ldd-check:
	@for p in $(PROGRAMS); do echo "== ldd $$p"; ldd $(LDD_DIR)/$$p; done
	@if for p in $(PROGRAMS); do ldd $(LDD_DIR)/$$p; done | grep -E 'libswift|libFoundation|_FoundationICU|libdispatch|libBlocksRuntime|/opt/swift|/usr/lib/swift'; then \
		echo "static-ldd: linked to the Swift toolchain"; exit 1; fi
	@echo "static-ldd: nothing from the Swift toolchain"
	@for p in $(ARCHIVE_FREE); do \
		if ldd $(LDD_DIR)/$$p | grep -E 'libarchive\.so|libisal\.so'; then \
			echo "static-ldd: $$p links libarchive or ISA-L; only airlock-decoder may (Package.swift: AirlockArchive)"; exit 1; fi; \
		if readelf -d $(LDD_DIR)/$$p | grep -E 'NEEDED.*\[liblzma\.so'; then \
			echo "static-ldd: $$p links liblzma itself; only airlock-decoder may (Package.swift: AirlockArchive)"; exit 1; fi; \
		if readelf -Ws --wide $(LDD_DIR)/$$p | awk '$$8 ~ /^(archive_|isal_|lzma_)/ { print "  " $$8; found = 1 } END { exit !found }'; then \
			echo "static-ldd: $$p calls libarchive, ISA-L or liblzma (linked statically or not); only airlock-decoder may"; exit 1; fi; \
	done
	@echo "static-ldd: $(ARCHIVE_FREE) link neither libarchive, ISA-L nor liblzma"
	@for p in $(NETWORK_FREE); do \
		if ldd $(LDD_DIR)/$$p | grep -E 'libnats\.so' || readelf -Ws --wide $(LDD_DIR)/$$p | awk '$$8 ~ /^(nats[A-Za-z]*_|js_|js[A-Z][A-Za-z]*_)/ { print "  " $$8; found = 1 } END { exit !found }'; then \
			echo "static-ldd: $$p links the NATS client; only airlock-publisher may (Package.swift: AirlockPublisher)"; exit 1; fi; \
	done
	@echo "static-ldd: $(NETWORK_FREE) do not link the NATS client"

# The ldd check, then sizes and start-up times.
static-check: static-ldd
	@ls -l $(addprefix .build/release/,$(PROGRAMS))
	@bash deploy/measure-startup.sh .build/release

man: $(MANPAGES)

.build/man/%: man/%.scd
	@mkdir -p .build/man
	$(SCDOC) < $< > $@

# Rewrites what the command, settings and reason tables define: the regions of
# man/*.scd between "; generated: NAME" and "; end of generated text" (in
# README.md, the same words in HTML comments), and the whole of completion/airlock.bash. Run it after changing a table and commit the
# result; make test fails while the committed files differ from the tables.
.PHONY: docs
docs: build
	@bin=$$($(SWIFT) build --show-bin-path)/airlock; set -e; \
	for page in man/airlock.1.scd man/airlock.json.5.scd README.md; do $$bin help --man $$page > $$page.new; mv $$page.new $$page; done; \
	$$bin help --completion > completion/airlock.bash.new; mv completion/airlock.bash.new completion/airlock.bash

install: man
	@for p in $(PROGRAMS); do test -x $(BUILD)/$$p || { echo "install: $(BUILD)/$$p missing (make static, or BUILD=.build/debug)"; exit 1; }; done
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(TMPFILESDIR) \
		$(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(DATADIR)/airlock $(DESTDIR)$(DOCDIR)/examples \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(COMPLETIONDIR) $(DESTDIR)$(COCKPITDIR)
	install -d -m 0750 $(DESTDIR)$(SUDOERSDIR)
	for f in $(COCKPIT_FILES); do $(RESERVICE) deploy/cockpit/$$f > $(DESTDIR)$(COCKPITDIR)/$$f; chmod 0644 $(DESTDIR)$(COCKPITDIR)/$$f; done
	$(RESERVICE) deploy/sudoers.d/airlock > $(DESTDIR)$(SUDOERSDIR)/airlock.new
	chmod 0440 $(DESTDIR)$(SUDOERSDIR)/airlock.new
	@if command -v visudo >/dev/null; then visudo -cqf $(DESTDIR)$(SUDOERSDIR)/airlock.new || { rm -f $(DESTDIR)$(SUDOERSDIR)/airlock.new; echo "install: the sudo rule does not parse"; exit 1; }; fi
	mv $(DESTDIR)$(SUDOERSDIR)/airlock.new $(DESTDIR)$(SUDOERSDIR)/airlock
	install -m 0755 $(BUILD)/airlock $(DESTDIR)$(BINDIR)/airlock
	install -m 0755 $(BUILD)/airlock-decoder $(BUILD)/airlock-keyed-decoder $(BUILD)/airlock-publisher $(DESTDIR)$(LIBEXECDIR)/
	for u in $(UNITS); do $(REPREFIX) deploy/$$u > $(DESTDIR)$(UNITDIR)/$$u; chmod 0644 $(DESTDIR)$(UNITDIR)/$$u; done
	$(REPREFIX) deploy/tmpfiles.d/airlock.conf > $(DESTDIR)$(TMPFILESDIR)/airlock.conf
	install -m 0644 deploy/sysusers.d/airlock.conf $(DESTDIR)$(SYSUSERSDIR)/airlock.conf
	install -m 0644 deploy/airlock.json $(DESTDIR)$(DATADIR)/airlock/airlock.json
	@# The operator's configuration is never overwritten (root-owned, read-only for airlock).
	test -e $(DESTDIR)$(SYSCONFDIR)/airlock/airlock.json || \
		install -D -m 0644 deploy/airlock.json $(DESTDIR)$(SYSCONFDIR)/airlock/airlock.json
	install -m 0644 etc/airlock.json $(DESTDIR)$(DOCDIR)/examples/airlock.json
	install -m 0755 deploy/nats-consumer.py $(DESTDIR)$(DOCDIR)/examples/nats-consumer.py
	install -m 0644 README.md $(DESTDIR)$(DOCDIR)/README.md
	install -m 0644 deploy/README.md $(DESTDIR)$(DOCDIR)/README.deploy.md
	install -m 0644 .build/man/airlock.1 $(DESTDIR)$(MANDIR)/man1/airlock.1
	install -m 0644 .build/man/airlock.json.5 $(DESTDIR)$(MANDIR)/man5/airlock.json.5
	install -m 0644 completion/airlock.bash $(DESTDIR)$(COMPLETIONDIR)/airlock
	chmod 0644 $(DESTDIR)$(TMPFILESDIR)/airlock.conf

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/airlock $(addprefix $(DESTDIR)$(LIBEXECDIR)/,airlock-decoder airlock-keyed-decoder airlock-publisher)
	rm -f $(addprefix $(DESTDIR)$(UNITDIR)/,$(UNITS)) $(DESTDIR)$(TMPFILESDIR)/airlock.conf $(DESTDIR)$(SYSUSERSDIR)/airlock.conf
	rm -f $(DESTDIR)$(MANDIR)/man1/airlock.1 $(DESTDIR)$(MANDIR)/man5/airlock.json.5 $(DESTDIR)$(COMPLETIONDIR)/airlock
	rm -rf $(DESTDIR)$(DATADIR)/airlock $(DESTDIR)$(DOCDIR) $(DESTDIR)$(COCKPITDIR)
	rm -f $(DESTDIR)$(SUDOERSDIR)/airlock
	@# $(SYSCONFDIR)/airlock/airlock.json is the operator's: left in place.
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

# Builds the package in a clean chroot (mmdebstrap: essential, build-essential, the
# Build-Depends, the toolchain's own libraries; the Swift toolchain bind-mounted from
# SWIFT_TOOLCHAIN, /opt/swift), then installs, runs and purges it there. Root; slow
# (a release build from nothing): not part of make test. deploy/test-chroot.sh.
.PHONY: deb-chroot
deb-chroot:
	bash deploy/test-chroot.sh

# An upgrade over the previous release with drops claimed, a quarantine, consumers'
# cursors and a daemon running (deploy/test-upgrade.sh). Builds the previous
# release's package in a worktree of its own (PREVIOUS: the commit of the last
# release, 0.1.0) and this one with make deb first. Root and dpkg on this machine
# (it installs and purges airlock): not part of make test.
PREVIOUS ?= e7dcbcf
PREVIOUS_TREE ?= .build/previous
.PHONY: deb-upgrade-test
deb-upgrade-test:
	test -d $(PREVIOUS_TREE) || git worktree add --detach $(PREVIOUS_TREE) $(PREVIOUS)
	ls $(PREVIOUS_TREE)/.build/deb/airlock_*_amd64.deb >/dev/null 2>&1 || $(MAKE) -C $(PREVIOUS_TREE) deb
	ls .build/deb/airlock_*_amd64.deb >/dev/null 2>&1 || $(MAKE) deb
	PREV_DEB=$$(ls $(PREVIOUS_TREE)/.build/deb/airlock_*_amd64.deb | tail -1) \
		NEW_DEB=$$(ls .build/deb/airlock_*_amd64.deb | tail -1) bash deploy/test-upgrade.sh
