# squall's developer commands. `make test` is what CI runs.
GO      ?= go
PKGS    ?= ./...
BENCH   ?= .

.PHONY: run test test-unit test-integration bench lint
.PHONY: services-up services-down services-status services-env

## run: the main job on embedded defaults (no Java, no services).
run:
	$(GO) run ./cmd/squall-demo

## test: lint, then every test (unit and integration) with the race detector,
##       against real Kafka and Cassandra; services this run started are
##       stopped again afterwards, also on failure (scripts/with-services.sh).
test: lint
	scripts/with-services.sh $(GO) test -race -count=1 $(PKGS)

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

## test-integration: the packages whose tests use internal/testenv, against
##       the real services; starts them if needed and leaves them running
##       (stop them with `make services-down`).
INTEGRATION_PKGS = $(shell grep -rl --include='*_test.go' --exclude-dir=.services --exclude-dir=.git \
	-e '"github.com/squallstream/squall/internal/testenv"' . | xargs -r -n1 dirname | sort -u)
test-integration:
	scripts/with-services.sh --keep $(GO) test -race -count=1 $(or $(INTEGRATION_PKGS),$(error no test imports internal/testenv))

## services-up / services-down / services-status / services-env: real Kafka
##       and Cassandra on 127.0.0.1 (scripts/services.sh; see docs/testing.md).
services-up:
	@scripts/services.sh up >/dev/null
services-down:
	@scripts/services.sh down
services-status:
	@scripts/services.sh status
services-env:
	@scripts/services.sh env
