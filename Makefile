# Bloomery: `make test` runs every test of every module (the root module and
# the nested ones), vet and gofmt checks, and a short run of every fuzz
# target. `.ci/run` calls exactly this.

GO       ?= go
# Nested modules (each has its own go.mod); found at run time so a new one
# is tested without editing this file.
MODULES  := $(shell find . -name go.mod -not -path './.git/*' -exec dirname {} \; | sort)
FUZZTIME ?= 5s

.PHONY: test vet fmt-check unit race fuzz-smoke bench-smoke bench

test: fmt-check vet unit fuzz-smoke

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	@for m in $(MODULES); do echo "== vet $$m"; (cd $$m && $(GO) vet ./...) || exit 1; done

# Unit, statistical and integration tests, with the race detector, in every
# module. BLOOMERY_SHORT=1 is not set here: CI runs the full statistical tests.
unit:
	@for m in $(MODULES); do echo "== test $$m"; (cd $$m && $(GO) test -race -count=1 -timeout 20m ./...) || exit 1; done

# Every Fuzz* target in the root module runs briefly.
fuzz-smoke:
	@./scripts/fuzz-smoke.sh $(FUZZTIME)

bench:
	cd bench && $(GO) run ./cmd/benchreport -out ../docs/benchmarks.md
