# Bloomery: `make test` runs every test of every module (the root module and
# the nested ones), vet and gofmt checks, and a short run of every fuzz
# target. `.ci/run` calls exactly this.

GO       ?= go
# Nested modules (each has its own go.mod); found at run time so a new one
# is tested without editing this file.
MODULES  := $(shell find . -name go.mod -not -path './.git/*' -not -path '*/node_modules/*' -exec dirname {} \; | sort)
FUZZTIME ?= 4s

# staticcheck, pinned; `go run pkg@version` fetches it through the module
# proxy once and caches the build.
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: test vet lint fmt-check unit race portable fuzz-smoke bench-smoke bench

test: fmt-check vet lint unit race portable fuzz-smoke

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	@for m in $(MODULES); do echo "== vet $$m"; (cd $$m && $(GO) vet ./...) || exit 1; done

lint:
	@for m in $(MODULES); do echo "== staticcheck $$m"; (cd $$m && $(STATICCHECK) ./...) || exit 1; done

# Other platforms: every module's tests (-short; PORTABLE_MODULES) as 386
# binaries, which run here (int is 32 bits, and every package takes its
# portable Go paths instead of the amd64 assembly; go test also runs its
# vet checks there); the root module vetted for arm64, which compiles the
# same portable files with 64-bit ints (the nested modules have no
# platform-specific files, so amd64 and 386 cover them); and the root
# module's tests as big-endian
# s390x binaries under qemu-user-static's emulator (Debian package
# qemu-user-static, which .ci/run installs): golden files written on amd64
# must decode, and filters built there must match them, on a big-endian
# machine too. Tests that need the host kernel to treat the process as
# native skip themselves there (filtertest.Emulated).
QEMU_S390X ?= qemu-s390x-static
# interop/parquet is left out of the 386 pass: it holds only tests, which
# move filters between Apache Arrow's Parquet reader/writer and package
# sbbf (whose own Parquet parsing runs on 386 with the root module), and
# compiling Arrow for 386 took 1.5 of that pass's 5 minutes.
PORTABLE_MODULES := $(filter-out ./interop/parquet,$(MODULES))
portable:
	@echo "== vet GOARCH=arm64 ."; GOARCH=arm64 $(GO) vet ./...
	@for m in $(PORTABLE_MODULES); do echo "== test GOARCH=386 -short $$m"; \
		(cd $$m && GOARCH=386 $(GO) test -short -count=1 ./...) || exit 1; done
	@if command -v $(QEMU_S390X) >/dev/null; then \
		echo "== test GOARCH=s390x -short (under $(QEMU_S390X))"; \
		GOARCH=s390x BLOOMERY_EMULATOR=$(QEMU_S390X) $(GO) test -short -count=1 -exec $(QEMU_S390X) ./...; \
	else \
		echo "== SKIPPED: big-endian tests need $(QEMU_S390X) (apt-get install qemu-user-static)"; \
	fi

# Unit, statistical and integration tests at full size (10^6 keys and
# more) in every module.
unit:
	@for m in $(MODULES); do echo "== test $$m"; (cd $$m && $(GO) test -count=1 -timeout 20m ./...) || exit 1; done

# The race detector over every concurrent package of every module
# (scripts/race.sh picks packages whose code imports sync, sync/atomic or
# net, or starts goroutines), with -short: smaller statistical key sets,
# every concurrent path still exercised.
race:
	@for m in $(MODULES); do echo "== race $$m"; (cd $$m && $(CURDIR)/scripts/race.sh) || exit 1; done

# Every Fuzz* target in the root module runs briefly.
fuzz-smoke:
	@./scripts/fuzz-smoke.sh $(FUZZTIME)

bench:
	cd bench && $(GO) run ./cmd/benchreport -out ../docs/benchmarks.md
