# The two commands of the README: `make site` and `make test`.
SWIFT ?= swift

.PHONY: site test docs deps release clean

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

clean:
	rm -rf .build output .sitegen docs/output docs/.sitegen
