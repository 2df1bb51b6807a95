# The two commands of the README: `make site` and `make test`.
SWIFT ?= swift

.PHONY: site test test-portable docs deps release dist deb check-deb clean

deps:
	@./scripts/install-deps

release: deps
	$(SWIFT) build -c release --product sitegen

# Build the bundled example site into output/.
site: release
	.build/release/sitegen build

# Build the manual (docs/, a sitegen site) into docs/output/.
docs: release
	.build/release/sitegen build --site docs

# Run the whole test suite (XCTest; the empty Swift Testing pass is skipped so the run ends on its summary).
test: deps
	$(SWIFT) test --disable-swift-testing

# The watch and publish tests again, against the portable watcher (polling) and renames (link + rename) that
# other systems than Linux use (docs/decisions.md 41d). Run after `make test`, which builds the tests. The
# random-changes property test is left out: it is most of IncrementalBuildTests' time, and publishes as the others do.
PORTABLE_TESTS = SiteWatchTests|SpareFilesTests|FullDiskTests|IncrementalBuildTests|CommandLineTests|ExampleSiteTests
test-portable: deps
	SITEGEN_WATCHER=poll SITEGEN_RENAME=portable $(SWIFT) test --disable-swift-testing --filter '$(PORTABLE_TESTS)' \
		--skip testIncrementalBuildsEqualCleanBuildsOverRandomChanges

# A tarball for Linux machines without Swift: dist/sitegen-VERSION-linux-ARCH.tar.gz (release build, Swift's runtime inside).
dist: deps
	./scripts/package dist

# A Debian package installing /usr/bin/sitegen: dist/sitegen_VERSION_ARCH.deb, its Depends read from the binary.
deb: deps
	./scripts/package deb

# Installs the .deb into a scratch root and builds a new site and the example site with it and with the
# binary built from source: the outputs must be identical.
check-deb: deps
	./scripts/check-deb

clean:
	rm -rf .build .build-release dist output .sitegen docs/output docs/.sitegen
