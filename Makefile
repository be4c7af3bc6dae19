# squall's developer commands. `make test` is what CI runs.
GO      ?= go
PKGS    ?= ./...
BENCH   ?= .

.PHONY: run test test-unit bench lint

## run: the main job on embedded defaults (no Java, no services).
run:
	$(GO) run ./cmd/squall-demo

## test: lint, then every test (unit and integration) with the race detector.
test: lint test-unit

## test-unit: tests that need nothing but Go.
test-unit:
	$(GO) test -race -count=1 $(PKGS)

## bench: every benchmark, once, with allocation figures.
bench:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem $(PKGS)

## lint: gofmt and go vet must be clean.
lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed on:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet $(PKGS)
