package main

// The sample logs in testdata are synthetic, made by internal/genlogs with
// fixed seeds; regenerate them with "go generate ./cmd/ratekeeper" and the
// golden outputs with "go test ./cmd/ratekeeper -update".
//
//go:generate go run ./internal/genlogs -n 3000 -seed 1 -o testdata/access.log
//go:generate go run ./internal/genlogs -n 1000 -seed 2 -start 2024-03-10T11:00:00Z -gzip -o testdata/access.log.1.gz
//go:generate go run ./internal/genlogs -n 500 -seed 3 -format json -span 10m -o testdata/access.jsonl
