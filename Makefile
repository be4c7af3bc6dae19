# squall's developer commands. `make test` is what CI runs.
GO      ?= go
PKGS    ?= ./...
BENCH   ?= .

.PHONY: bench-storm bench-storm-quick bench-pipeline
.PHONY: run demo test test-unit test-integration bench lint
.PHONY: services-up services-down services-status services-env install-chromium
.PHONY: partitions

## run: the main job on embedded defaults (no Java, no services): the
##      room-presence example (gen, run and verify in one process).
run:
	$(GO) run ./examples/roompresence

## demo: the tuple-level core alone: a word count with injected failures.
demo:
	$(GO) run ./cmd/squall-demo

## test: lint, then every test (unit and integration) with the race detector,
##       against real Kafka, Cassandra and a 3-member etcd cluster; services this run started are
##       stopped again afterwards, also on failure (scripts/with-services.sh).
##       Two steps run side by side, each printing its results when done:
##       the packages without integration tests (in parallel), and the
##       integration packages one at a time (see test-integration), so a test
##       that stops a service never runs while another package uses it.
test: lint
	scripts/with-services.sh $(MAKE) --no-print-directory -k -j2 --output-sync=target go-test-unit-pkgs go-test-integration-pkgs

## test-unit: tests that need nothing but Go.
test-unit:
	$(GO) test -race -count=1 -timeout 45m $(PKGS)

## install-chromium: Debian's chromium, which the monitor's browser test
##       drives headless (apt-get, through sudo when not root); .ci/run
##       runs it. Without it the test skips, or fails under CI.
install-chromium:
	scripts/install-chromium.sh

## bench: every benchmark, once, with allocation figures.
bench:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem $(PKGS)

## bench-storm: side by side with Apache Storm (Java 17, Maven): alternating
##       rounds, medians and ratios, written into docs/PERFORMANCE.md (about
##       30 minutes); bench-storm-quick: a 2-minute smoke run, docs untouched.
bench-storm:
	bench/compare.sh
bench-storm-quick:
	bench/compare.sh --quick

## bench-pipeline: room presence end to end against the real Kafka and
##       Cassandra beside each service alone (raw-kafka, raw-cassandra), in
##       one run: prints `roompresence events/s = A, limit = ..., ratio`
##       (needs the services' variables: set -a; eval "$$(scripts/services.sh
##       env)"; set +a; EVENTS sets the event count, default 200,000, and
##       ROUNDS the alternating rounds, default 2; about 6 minutes).
EVENTS ?= 200000
ROUNDS ?= 2
bench-pipeline:
	bench/pipeline.sh --events $(EVENTS) --rounds $(ROUNDS)

## soak: room presence for SOAK_DURATION (default 30m) on the embedded
##       defaults (no Java, no services) with injected retryable failures
##       and worker panics, fed 2,000 events/s (bench/soak): prints the
##       run's resident set and goroutines every SOAK_INTERVAL (default 1m),
##       then fails if its anonymous resident set or its goroutines grow
##       from the middle third of the run to the last, or if verify finds a
##       mismatch (docs/PERFORMANCE.md, "Memory as the work grows: soak and
##       RSS"). The short run: SOAK_DURATION=3m SOAK_INTERVAL=15s make soak
##       (3 min 13 s in all here).
.PHONY: soak
SOAK_DURATION ?= 30m
SOAK_INTERVAL ?= 1m
soak:
	$(GO) run ./bench/soak -duration $(SOAK_DURATION) -interval $(SOAK_INTERVAL)

## lint: gofmt, go vet and staticcheck must be clean. staticcheck is
##       pinned (STATICCHECK_VERSION) and built through the Go module proxy
##       into .tools/ on first use.
STATICCHECK_VERSION = v0.8.2
STATICCHECK = .tools/staticcheck-$(STATICCHECK_VERSION)
lint: $(STATICCHECK)
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed on:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet $(PKGS)
	$(STATICCHECK) $(PKGS)
$(STATICCHECK):
	mkdir -p .tools
	GOBIN=$(CURDIR)/.tools/bin-$(STATICCHECK_VERSION) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	mv .tools/bin-$(STATICCHECK_VERSION)/staticcheck $@ && rmdir .tools/bin-$(STATICCHECK_VERSION)

## test-integration: the packages whose tests use internal/testenv, against
##       the real services; starts them if needed and leaves them running
##       (stop them with `make services-down`). They run one at a time
##       (go test -p 1) with SQUALL_SERVICES_EXCLUSIVE=1: a test may stop or
##       restart a shared service (testenv.RestartService), so no other
##       package's tests may be using it meanwhile.
INTEGRATION_PKGS = $(shell grep -rl --include='*_test.go' --exclude-dir=.services --exclude-dir=.git \
	-e '"github.com/squallstream/squall/internal/testenv"' . | xargs -r -n1 dirname | sort -u)
GO_TEST_INTEGRATION = env SQUALL_SERVICES_EXCLUSIVE=1 $(GO) test -race -count=1 -timeout 45m -p 1
test-integration:
	scripts/with-services.sh --keep $(GO_TEST_INTEGRATION) $(or $(INTEGRATION_PKGS),$(error no test imports internal/testenv))

# The two steps of `make test`, run by scripts/with-services.sh: $(PKGS)
# split into packages with and without integration tests, as import paths.
# Packages without a test that imports internal/testenv must not use the
# services: they run while an integration test may have stopped one.
ALL_IMPORTS = $(shell $(GO) list $(PKGS))
INTEGRATION_IMPORTS = $(shell $(GO) list $(INTEGRATION_PKGS))
.PHONY: go-test-unit-pkgs go-test-integration-pkgs
go-test-unit-pkgs:
	$(if $(filter-out $(INTEGRATION_IMPORTS),$(ALL_IMPORTS)),$(GO) test -race -count=1 -timeout 45m $(filter-out $(INTEGRATION_IMPORTS),$(ALL_IMPORTS)))
go-test-integration-pkgs:
	$(if $(filter $(INTEGRATION_IMPORTS),$(ALL_IMPORTS)),$(GO_TEST_INTEGRATION) $(filter $(INTEGRATION_IMPORTS),$(ALL_IMPORTS)))

## partitions: the partition harness (docs/partitions.md): the cluster on
##       hosts in network namespaces, with certificates, running room
##       presence against real Kafka and Cassandra under seeded network and
##       process faults; verify must find 0 mismatches and commits must
##       resume within 60 s of every heal. Needs root (SKIP otherwise, FAIL
##       under CI=true). PARTITION_SCHEDULES (default 2), PARTITION_SEED
##       (PARTITION_SEED=N PARTITION_SCHEDULES=1 reruns one), PARTITION_DIR,
##       PARTITION_KINDS, PARTITION_MUTANT.
partitions:
	scripts/partitions.sh

## services-up / services-down / services-status / services-env: real Kafka,
##       Cassandra and etcd (3 members) on 127.0.0.1 (scripts/services.sh;
##       see docs/testing.md).
services-up:
	@scripts/services.sh up >/dev/null
services-down:
	@scripts/services.sh down
services-status:
	@scripts/services.sh status
services-env:
	@scripts/services.sh env
