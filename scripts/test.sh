#!/usr/bin/env bash
# The project's test command (README; .ci/run calls exactly this).
# Fetches the Go modules, checks formatting and vet, and runs every test.
# Datasets other than MNIST are read from $PRIVTRAIN_DATA; when it is unset and
# ../shared/datasets exists beside the checkout, that folder is used.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${PRIVTRAIN_DATA:-}" ] && [ -d ../shared/datasets ]; then
  PRIVTRAIN_DATA="$(cd ../shared/datasets && pwd)"
  export PRIVTRAIN_DATA
fi
echo "PRIVTRAIN_DATA=${PRIVTRAIN_DATA:-<unset: tests that need Fashion-MNIST or ijcnn1 are skipped>}"
go mod download
unformatted="$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi
go vet ./...
# No function of the runner or the CLI above cyclomatic complexity 25
# (gocyclo's count; scripts/cyclo prints the worst offenders).
go run ./scripts/cyclo -top 3 -over 25 runner cmd
go test -count=1 -timeout 40m "$@" ./...
# The pure-Go fallbacks of the assembly kernels: build and vet everything
# with -tags purego, and test the packages that have kernels.
go vet -tags purego ./...
go test -count=1 -tags purego "$@" ./internal/... ./model/
# The example module (its own go.mod, replace to this checkout): vet, test, and a short training run.
(cd examples/custom-aggregator && go vet ./... && go test -count=1 ./... && go run . --steps 20)
# The accountant example module (issue 23): an accountant registered from outside, used by name.
(cd examples/custom-accountant && go vet ./... && go test -count=1 ./... && go run . --steps 20)
# CI also runs a tiny grid on a real single-node Slurm (needs root; by hand:
# scripts/slurm-ci.sh).
# CI also kills and resumes two short runs at random moments and requires
# bit-identical results (about 40 s; the full form: scripts/crash_trials.sh).
if [ "${CI:-}" = true ]; then
  scripts/crash_trials.sh --short
  scripts/slurm-ci.sh
fi
