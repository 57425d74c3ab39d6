# fr: build, test and measure the toolkit. `make help` lists the targets.
GO       ?= go
BIN      := bin
FUZZTIME ?= 30s

PREFIX   ?= /usr/local
DESTDIR  ?=
CMDS     := $(notdir $(wildcard cmd/fr-*))

# The version and revision every --version prints, from the clone (else "dev" and none).
# -ldflags on the command line is applied after GOFLAGS, so the stamp holds whatever GOFLAGS says.
VERSION  := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
REVISION := $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS  := -X github.com/fuseraft/fr/internal/cmdutil.Version=$(VERSION) -X github.com/fuseraft/fr/internal/cmdutil.Revision=$(REVISION)

.PHONY: help build test test-under-load chaos demo demo-fleet bench bench-quick fuzz man install clean e2e-otel

help: ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

build: ## build every command into ./bin, stamped with the version and revision of the clone
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/...

test: ## go vet, then every test with the race detector (what CI runs), and the ten slowest
	$(GO) vet ./...
	$(GO) build -o $(BIN)/testsum ./internal/testkit/testsum
	GO=$(GO) GORACE="$(GORACE) atexit_sleep_ms=0" $(BIN)/testsum -race -count=1 ./...

test-under-load: ## make test while a busy loop per core keeps every core busy (.ci/under-load)
	GO=$(GO) .ci/under-load

chaos: ## the long runs (FR_CHAOS=full): the fault suite at full size, 200 MB lines, 400 random filters
	$(GO) build -o $(BIN)/testsum ./internal/testkit/testsum
	FR_CHAOS=full GO=$(GO) $(BIN)/testsum -count=1 -timeout 60m ./...

demo: build ## a whole pipeline against fr-sim: daemon, fr-attach, fr-approve, fr-filter
	bash demo/run.sh

demo-fleet: build ## a fleet on one machine: embedded NATS JetStream, 3 fr-sim daemons and workers, 30 tasks
	bash demo/fleet.sh

bench: ## measure every command against jq, gojq, cat and raw clients (see bench/README.md)
	bench/run.sh

bench-quick: ## a one-minute smoke run of the benchmarks
	bench/run.sh --quick

e2e-otel: ## fr-otel against a real Jaeger v2 built from the module proxy (e2e/jaeger; a long first build)
	GO=$(GO) bash e2e/jaeger/run.sh

fuzz: ## run each fuzz target for FUZZTIME (default 30s)
	@for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

man: ## regenerate man/ and completions/ from the command definitions
	$(GO) run ./internal/cmd/mangen

install: build ## install commands, man pages and completions under $(DESTDIR)$(PREFIX) (default /usr/local)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
	  $(DESTDIR)$(PREFIX)/share/bash-completion/completions \
	  $(DESTDIR)$(PREFIX)/share/zsh/site-functions \
	  $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
	for c in $(CMDS); do \
	  install -m 755 $(BIN)/$$c $(DESTDIR)$(PREFIX)/bin/$$c || exit 1; \
	  if [ -f man/$$c.1 ]; then install -m 644 man/$$c.1 $(DESTDIR)$(PREFIX)/share/man/man1/; fi; \
	  install -m 644 completions/bash/$$c $(DESTDIR)$(PREFIX)/share/bash-completion/completions/$$c || exit 1; \
	  install -m 644 completions/zsh/_$$c $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_$$c || exit 1; \
	  install -m 644 completions/fish/$$c.fish $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/$$c.fish || exit 1; \
	done

clean: ## remove build output and generated benchmark corpora
	rm -rf $(BIN) bench/corpus
